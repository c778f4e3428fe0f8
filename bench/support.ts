/** Small helpers shared by the benchmarks: percentiles and a uniform result line. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}

/** Prints `name: value unit (target …) [reference …, ratio …]` on one line. */
export function report(line: {
  name: string
  value: number
  unit: string
  target?: string
  ok?: boolean
  reference?: { name: string; value: number }
}): void {
  const parts = [`${line.name}: ${line.value.toFixed(2)} ${line.unit}`]
  if (line.target)
    parts.push(`target ${line.target}${line.ok === undefined ? '' : line.ok ? ' ✓' : ' ✗'}`)
  if (line.reference) {
    parts.push(`reference ${line.reference.name} ${line.reference.value.toFixed(2)} ${line.unit}`)
    parts.push(`ratio ${(line.value / line.reference.value).toFixed(2)}×`)
  }
  console.log(parts.join(' | '))
}

/** One keep-alive HTTP/1.1 connection on which `get` times a whole GET, in milliseconds. */
export interface Probe {
  get(path: string): Promise<number>
  close(): void
}

const CRLF2 = Buffer.from('\r\n\r\n')
const LAST_CHUNK = Buffer.from('\r\n0\r\n\r\n')

/**
 * A bare client on one socket: no pooling, parsing or decoding beyond finding where the response
 * ends (Content-Length or a chunked body's last chunk), so what it adds is small and the same for
 * every target it is pointed at. A status other than 200 fails the request.
 */
export async function openProbe(base: string, headers: Record<string, string>): Promise<Probe> {
  const url = new URL(base)
  const head = Object.entries({ host: url.host, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  let buf = Buffer.alloc(0)
  let waiting: { start: number; resolve(ms: number): void; reject(e: Error): void } | null = null
  const settle = () => {
    if (!waiting) return
    const end = buf.indexOf(CRLF2)
    if (end < 0) return
    const text = buf.subarray(0, end).toString('latin1')
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(text)
    let total: number
    if (length) total = end + 4 + Number(length[1])
    else if (/\r\ntransfer-encoding:\s*chunked/i.test(text)) {
      const last = buf.indexOf(LAST_CHUNK, end + 2)
      if (last < 0) return
      total = last + LAST_CHUNK.length
    } else total = end + 4
    if (buf.length < total) return
    const ms = performance.now() - waiting.start
    const w = waiting
    waiting = null
    buf = buf.subarray(total)
    if (!text.startsWith('HTTP/1.1 200')) w.reject(new Error(`${base}: ${text.split('\r\n')[0]}`))
    else w.resolve(ms)
  }
  const socket = await Bun.connect({
    hostname: url.hostname,
    port: Number(url.port),
    socket: {
      data(_s, chunk) {
        buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk)
        settle()
      },
      close() {
        waiting?.reject(new Error(`${base}: connection closed`))
      },
      error(_s, err) {
        waiting?.reject(err)
      },
    },
  })
  socket.setNoDelay(true)
  return {
    get: (path) =>
      new Promise<number>((resolve, reject) => {
        waiting = { start: performance.now(), resolve, reject }
        socket.write(`GET ${path} HTTP/1.1\r\n${head}\r\n`)
      }),
    close: () => socket.end(),
  }
}

/**
 * Latency of one connection per target, the targets' requests interleaved one by one (in turn,
 * the order rotating each round): a noisy neighbour then hurts every target alike, which
 * separate runs one after another cannot promise. Each target's sorted samples, in ms.
 */
export async function interleavedLatency(
  targets: Record<string, string>,
  path: string,
  headers: Record<string, string>,
  samples: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(targets)
  const probes = await Promise.all(names.map((n) => openProbe(targets[n]!, headers)))
  const out: number[][] = names.map(() => [])
  try {
    for (let i = 0; i < samples + 200; i++)
      for (let k = 0; k < names.length; k++) {
        const at = (i + k) % names.length
        const ms = await probes[at]!.get(path)
        if (i >= 200) out[at]!.push(ms) // the first 200 rounds warm up
      }
  } finally {
    for (const p of probes) p.close()
  }
  return Object.fromEntries(names.map((n, i) => [n, out[i]!.sort((a, b) => a - b)]))
}

/**
 * A smoke run (`bun bench/index.ts --smoke`, or MMP_BENCH_SMOKE=1): every benchmark end to end
 * with tiny sizes, as CI runs it so that none rots unnoticed. Its figures mean nothing.
 */
export const SMOKE = process.env.MMP_BENCH_SMOKE === '1'

/** The benchmark's size, or the tiny one of a smoke run. */
export const sized = (full: number, smoke: number): number => (SMOKE ? smoke : full)
