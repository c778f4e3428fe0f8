import { appendFileSync } from 'node:fs'

/**
 * What a test client talks to: a base URL over HTTP (end-to-end tests, a real `mmp serve`) or an
 * app in this process (unit tests, `app.handle` of a service's Elysia instance).
 */
export type Target = string | { handle(request: Request): Response | Promise<Response> }

/** An answer: its status, its body (JSON parsed, else the text, null when empty), its headers. */
export interface Answer<T = any> {
  status: number
  body: T
  headers: Headers
}

/** One answer the e2e suite received, as the contract test (test/contract.test.ts) checks it. */
export interface RecordedExchange {
  method: string
  path: string
  status: number
  contentType: string | null
  body: unknown
}

/** Where `recordExchange` appends (one JSON line per answer), or every answer to `sink`. */
const contractLog = process.env.MMP_CONTRACT_LOG
let sink: ((e: RecordedExchange) => void) | undefined

/** Sends every answer `api()` receives over HTTP to `fn` (the contract test's recorder). */
export function onExchange(fn: ((e: RecordedExchange) => void) | undefined): void {
  sink = fn
}

function recordExchange(method: string, path: string, res: Response, body: unknown): void {
  if (!contractLog && !sink) return
  // Answers of a test's fake upstream or of a proxy under test are not the platform's.
  if (res.headers.get('x-test-fake-upstream') || res.headers.get('x-test-not-platform')) return
  const e: RecordedExchange = {
    method,
    path,
    status: res.status,
    contentType: res.headers.get('content-type'),
    body,
  }
  sink?.(e)
  if (contractLog) appendFileSync(contractLog, `${JSON.stringify(e)}\n`)
}

/**
 * The one JSON client of the tests, end-to-end and unit alike. `auth` is a bearer token or headers
 * to send (a unit test kit's `authFor(...)`). Answers received over HTTP are recorded for the
 * contract check (MMP_CONTRACT_LOG); those of an app called in-process are not.
 *
 * @example
 * const res = await api(p.gateway, token).post('/api/v1/webhooks', { url, events })
 * const mine = api(app, await kit.authFor({ tenantId: 'acme' }))
 * expect((await mine.get<{ data: unknown[] }>('/api/v1/webhooks')).body.data).toHaveLength(1)
 */
export function api(
  target: Target,
  auth?: string | Record<string, string>,
  headers: Record<string, string> = {},
) {
  const base = typeof target === 'string' ? target : 'http://localhost'
  const request = async <T = any>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Answer<T>> => {
    const req = new Request(base + path, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(typeof auth === 'string' ? { authorization: `Bearer ${auth}` } : (auth ?? {})),
        ...headers,
        ...extra,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const res = typeof target === 'string' ? await fetch(req) : await target.handle(req)
    const text = await res.text()
    let json: any = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      json = text
    }
    if (typeof target === 'string') recordExchange(method, path, res, json)
    return { status: res.status, body: json as T, headers: res.headers }
  }
  return {
    /** Any method; a body is sent as JSON only when given. */
    request,
    get: <T = any>(path: string, extra?: Record<string, string>) =>
      request<T>('GET', path, undefined, extra),
    post: <T = any>(path: string, body?: unknown, extra?: Record<string, string>) =>
      request<T>('POST', path, body ?? {}, extra),
    put: <T = any>(path: string, body?: unknown, extra?: Record<string, string>) =>
      request<T>('PUT', path, body ?? {}, extra),
    patch: <T = any>(path: string, body?: unknown, extra?: Record<string, string>) =>
      request<T>('PATCH', path, body ?? {}, extra),
    delete: <T = any>(path: string, extra?: Record<string, string>) =>
      request<T>('DELETE', path, undefined, extra),
  }
}
