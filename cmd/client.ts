import { existsSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { Config } from '../daemon/config.ts'

export const clientArgs = {
  url: { type: 'string', description: 'gateway URL (default http://127.0.0.1:<gateway port>)' },
} as const

export interface CliApi {
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T>
  /** A GET whose failure the command handles itself (a service that may not be running). */
  read<T = any>(path: string): Promise<{ status: number; body: T }>
  /** A binary resource (a PDF), as the operator. */
  download(path: string): Promise<Uint8Array>
  /**
   * A file streamed as a multipart form (`file` plus `fields`), as the dashboard sends it;
   * `onSent` hears the file's bytes as they go. The answer is returned whatever its status.
   */
  upload<T = any>(
    path: string,
    file: string,
    fields: Record<string, string>,
    onSent?: (bytes: number, size: number) => void,
  ): Promise<{ status: number; body: T }>
}

/**
 * Admin commands act through the running platform's API as the platform operator, so they go
 * through the same validation, transactions and events as any client. Credentials come from
 * MMP_OPERATOR_EMAIL / MMP_OPERATOR_PASSWORD or the data dir's operator.txt.
 */
export async function operatorApi(
  config: Config,
  url?: string,
  /** What else to do when no platform answers (e.g. a command that also works offline). */
  orElse?: string,
): Promise<CliApi> {
  const base = (url ?? `http://127.0.0.1:${config.ports.gateway}`).replace(/\/+$/, '')
  await assertGateway(base, { fromFlag: Boolean(url), orElse })
  let email = config.get<string>('operator.email')
  let password = config.get<string | null>('operator.password')
  const file = join(config.dataDir, 'operator.txt')
  if (!password && existsSync(file)) {
    const text = readFileSync(file, 'utf8')
    email = /email: (.+)/.exec(text)?.[1]?.trim() ?? email
    password = /password: (.+)/.exec(text)?.[1]?.trim() ?? null
  }
  if (!password)
    fail(
      existsSync(config.dataDir)
        ? `no operator credentials: set MMP_OPERATOR_PASSWORD, or make ${file} readable`
        : `no data dir at ${config.dataDir} (its operator.txt holds the operator password): pass --data-dir or set MMP_OPERATOR_PASSWORD`,
    )
  let res: Response
  try {
    res = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    })
  } catch {
    fail(`the platform is not reachable at ${base}; start it with \`mmp serve\` or pass --url`)
  }
  const login = (await res.json().catch(() => ({}))) as { access_token?: string; detail?: string }
  if (!res.ok || !login.access_token) fail(`operator login failed: ${login.detail ?? res.status}`)
  const token = login.access_token
  return {
    async call(method, path, body, headers) {
      const r = await fetch(base + path, {
        method,
        headers: {
          ...headers,
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      })
      const text = await r.text()
      const data = text ? safeJson(text) : null
      if (!r.ok)
        fail(`${method} ${path}: ${r.status} ${(data as { detail?: string })?.detail ?? text}`)
      return data as never
    },
    async read(path) {
      const r = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })
      const text = await r.text()
      return { status: r.status, body: (text ? safeJson(text) : null) as never }
    },
    async download(path) {
      const r = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })
      if (!r.ok) fail(`GET ${path}: ${r.status} ${await r.text()}`)
      return new Uint8Array(await r.arrayBuffer())
    },
    async upload(path, file, fields, onSent) {
      const form = multipartStream(file, fields, onSent)
      const r = await fetch(base + path, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${form.boundary}`,
          'content-length': String(form.length),
        },
        body: form.body,
      })
      const text = await r.text()
      return { status: r.status, body: (text ? safeJson(text) : null) as never }
    },
  }
}

/**
 * A multipart/form-data body read from the file as it is sent, never held whole: the fields,
 * then the `file` part. Its length is known beforehand, so it goes with a Content-Length.
 */
function multipartStream(
  path: string,
  fields: Record<string, string>,
  onSent?: (bytes: number, size: number) => void,
) {
  const boundary = `mmp-${crypto.randomUUID()}`
  const enc = new TextEncoder()
  const quoted = (v: string) => v.replace(/[\r\n"]/g, (c) => encodeURIComponent(c))
  let head = ''
  for (const [name, value] of Object.entries(fields))
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(basename(path))}"\r\nContent-Type: application/octet-stream\r\n\r\n`
  const pre = enc.encode(head)
  const post = enc.encode(`\r\n--${boundary}--\r\n`)
  const file = Bun.file(path)
  const size = file.size
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(pre)
    },
    async pull(controller) {
      reader ??= file.stream().getReader()
      const { done, value } = await reader.read()
      if (done) {
        controller.enqueue(post)
        controller.close()
        return
      }
      sent += value.length
      onSent?.(sent, size)
      controller.enqueue(value)
    },
    cancel() {
      void reader?.cancel()
    },
  })
  return { boundary, body, length: pre.length + size + post.length }
}

/**
 * Stops with one line unless `base` is an mmp gateway: its `GET /health` answers JSON naming the
 * gateway service and a version. So a `--url` pointing at another server (or a typo) says so
 * instead of failing later on a login that makes no sense there.
 */
export async function assertGateway(
  base: string,
  { fromFlag, orElse }: { fromFlag: boolean; orElse?: string },
): Promise<void> {
  const hint =
    (fromFlag ? 'check --url' : 'start it with `mmp serve` or pass --url') +
    (orElse ? `, or ${orElse}` : '')
  let res: Response
  try {
    res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000), redirect: 'manual' })
  } catch (err) {
    const why = (err as Error)?.name === 'TimeoutError' ? 'no answer in 5 s' : 'connection failed'
    fail(`the platform is not reachable at ${base} (${why}); ${hint}`)
  }
  const body = (await res.json().catch(() => null)) as { service?: unknown; version?: unknown }
  if (body?.service !== 'gateway' || typeof body.version !== 'string')
    fail(
      `${base} is not an mmp gateway (GET /health answered ${res.status} ${res.headers.get('content-type') ?? 'without a content type'}); ${hint}`,
    )
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** One line on stderr and exit 1: what went wrong and what to do, never a stack trace. */
export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`)
  process.exit(1)
}
