import type { AttemptOutcome } from './queue.ts'
import { signedHeaders } from './signing.ts'
import type { DestinationPolicy, Resolver } from './ssrf.ts'
import { type Targets, targetsOf } from './targets.ts'

const EXCERPT_BYTES = 1024
const READ_LIMIT = 64 * 1024

export interface AttemptInput {
  url: string
  messageId: string
  body: string
  keys: Uint8Array[]
  timeoutMs: number
  policy: DestinationPolicy
  resolve: Resolver
  nowMs: number
  /**
   * Called as soon as the status line arrives, before the body is read: the dispatcher commits
   * a 2xx right there, which keeps the window in which a crash could resend it minimal.
   */
  onAnswer?: (status: number) => void
}

/**
 * One POST of a signed delivery. The destination is resolved and checked at attempt time (a check
 * serves the attempts of one second, targets.ts) and the request connects to that checked address
 * (Host header and TLS server name keep the original host), so a name re-pointed at an internal
 * address after registration reaches nothing. Redirects are never followed: a 3xx is a failed
 * attempt.
 */
export async function attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
  const at = isoOf(input.nowMs)
  const started = performance.now()
  const done = (
    statusCode: number | null,
    ok: boolean,
    responseExcerpt: string | null,
    error: string | null,
  ): AttemptOutcome => ({
    at,
    latencyMs: Math.round(performance.now() - started),
    statusCode,
    ok,
    responseExcerpt,
    error,
  })
  let checked: Targets
  try {
    checked = await targetsOf(input.url, input.policy, input.resolve)
  } catch (err) {
    return done(null, false, null, `destination refused: ${(err as Error).message}`)
  }
  const { original, host, urls: targets } = checked
  const timestamp = Math.floor(input.nowMs / 1000)
  const headers = signedHeaders(input.keys, input.messageId, timestamp, input.body)
  headers.host = original.host
  const signal = AbortSignal.timeout(input.timeoutMs)
  const post = (target: URL) =>
    fetch(target, {
      method: 'POST',
      body: input.body,
      headers,
      redirect: 'manual',
      signal,
      proxy: false as never,
      tls: original.protocol === 'https:' ? { serverName: host } : undefined,
    } as RequestInit)
  try {
    let res: Response | null = null
    for (let i = 0; !res; i++) {
      try {
        res = await post(targets[i]!)
      } catch (err) {
        const refused = (err as { code?: string }).code === 'ECONNREFUSED'
        if (!refused || i + 1 >= targets.length) throw err
      }
    }
    input.onAnswer?.(res.status)
    // The status decides the outcome; a body that breaks off afterwards changes nothing.
    const text = await readLimited(res).catch(() => '')
    const excerpt = text.length > EXCERPT_BYTES ? text.slice(0, EXCERPT_BYTES) : text
    const status = res.status
    if (status >= 200 && status < 300) return done(status, true, excerpt, null)
    const error =
      status >= 300 && status < 400
        ? `redirect to ${res.headers.get('location') ?? '(no location)'} not followed`
        : `the endpoint answered ${status}`
    return done(status, false, excerpt, error)
  } catch (err) {
    const e = err as Error
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError'
    const error = timedOut
      ? `no answer within ${input.timeoutMs} ms`
      : `request failed: ${e.message}`
    return done(null, false, null, error)
  }
}

let lastMs = Number.NaN
let lastIso = ''
/** The ISO time of an epoch ms; a turn starts its attempts within a millisecond or two. */
function isoOf(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

/**
 * Reads at most 64 KiB of a response body and drops the rest. A body framed by a Content-Length
 * within the limit, with no transfer or content encoding, is read whole: fetch reads exactly that
 * many bytes (HTTP/1.1 framing), and one read is cheaper than the chunk loop most receivers' few
 * bytes would take. A chunked or compressed body could run past any length it declares.
 */
async function readLimited(res: Response): Promise<string> {
  const length = res.headers.get('content-length')
  if (
    length !== null &&
    Number(length) <= READ_LIMIT &&
    res.headers.get('transfer-encoding') === null &&
    (res.headers.get('content-encoding') ?? 'identity') === 'identity'
  )
    return (await res.text()).slice(0, READ_LIMIT)
  // Asked only here: \`res.body\` makes a stream, which the whole read above does without.
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
    if (size >= READ_LIMIT) {
      await reader.cancel().catch(() => {})
      break
    }
  }
  return new TextDecoder().decode(Buffer.concat(chunks)).slice(0, READ_LIMIT)
}
