import { AppError, type ErrorCode, type FieldError, statusOf } from './errors.ts'

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
}

export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: string
  request_id: string | undefined
  errors?: FieldError[]
  [key: string]: unknown
}

/**
 * Builds an RFC 9457 problem+json response.
 *
 * @example
 * return problemResponse({ status: 404, code: 'NOT_FOUND', detail: 'no such route' }, requestId)
 */
export function problemResponse(
  p: {
    status: number
    code: ErrorCode
    detail: string
    errors?: FieldError[]
    extra?: Record<string, unknown>
  },
  requestId: string | undefined,
  headers: Record<string, string> = {},
): Response {
  const body: Problem = {
    type: `https://mmp.dev/problems/${p.code.toLowerCase().replaceAll('_', '-')}`,
    title: titles[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    code: p.code,
    request_id: requestId,
    ...(p.errors ? { errors: p.errors } : {}),
    ...(p.extra ?? {}),
  }
  const h = new Headers(headers)
  h.set('content-type', 'application/problem+json')
  if (requestId) h.set('x-request-id', requestId)
  return new Response(JSON.stringify(body), { status: p.status, headers: h })
}

export function appErrorResponse(err: AppError, requestId: string | undefined): Response {
  return problemResponse(
    {
      status: statusOf[err.code],
      code: err.code,
      detail: err.detail,
      ...(err.errors ? { errors: err.errors } : {}),
      ...(err.extra ? { extra: err.extra } : {}),
    },
    requestId,
    err.headers ?? {},
  )
}

/** Turns an Elysia validation error's list into field errors with JSON-pointer-ish paths. */
export function fieldErrorsOf(
  all: Array<{ path?: string; message?: string; summary?: string }>,
  whole = '(body)',
): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const e of all) {
    const field = (e.path ?? '').replace(/^\//, '').replaceAll('/', '.') || whole
    const message = e.summary ?? e.message ?? 'is invalid'
    const key = `${field}:${message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ field, message })
  }
  return out
}

export { AppError }

const FULL = /^(SQLITE_FULL|ENOSPC|EDQUOT)/
const UNAVAILABLE =
  /^(SQLITE_(IOERR|BUSY|LOCKED|CANTOPEN|READONLY|PROTOCOL|NOMEM|CORRUPT)|EIO|EMFILE|ENFILE|EROFS|EAGAIN)/

/**
 * A storage fault (SQLite or the file system) as the kernel error a client should see: 507
 * STORAGE_FULL when the disk is full, 503 STORAGE_UNAVAILABLE for I/O errors, locks, exhausted
 * descriptors and pages that read back malformed (a failed read looks like that; real corruption
 * is logged by the caller), both with Retry-After, since they pass without anyone fixing the request. Null for
 * anything else. Looks one `cause` deep.
 *
 * @example
 * const storage = storageError(err)
 * if (storage) return appErrorResponse(storage, requestId)
 */
export function storageError(err: unknown): AppError | null {
  for (let e = err, depth = 0; e && depth < 2; e = (e as Error).cause, depth++) {
    if (e instanceof AppError) return null
    const code = String((e as { code?: unknown }).code ?? '')
    const message = String((e as Error).message ?? '')
    if (FULL.test(code) || /database or disk is full|no space left/i.test(message)) {
      return new AppError('STORAGE_FULL', 'the storage is full; retry once space is freed', {
        headers: { 'Retry-After': '30' },
        cause: e,
      })
    }
    if (
      UNAVAILABLE.test(code) ||
      /disk I\/O error|database is locked|unable to open|malformed/i.test(message)
    ) {
      return new AppError('STORAGE_UNAVAILABLE', 'the storage failed; retry in a moment', {
        headers: { 'Retry-After': '1' },
        cause: e,
      })
    }
  }
  return null
}
