import { FENCED } from '../../tenants/move-fence.ts'
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
  421: 'Misdirected Request',
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

/** One problem of an Elysia (TypeBox) validation error. */
export interface SchemaIssue {
  path?: string
  message?: string
  summary?: string
  schema?: unknown
  value?: unknown
}

/** The allowed values of an enum-like schema (a union of literals, or `enum`), if it is one. */
function allowedValuesOf(schema: unknown): unknown[] | null {
  const s = schema as { anyOf?: unknown[]; enum?: unknown[]; const?: unknown } | undefined
  if (Array.isArray(s?.enum)) return s.enum
  if (!Array.isArray(s?.anyOf) || s.anyOf.length === 0) return null
  const values: unknown[] = []
  for (const branch of s.anyOf) {
    const b = branch as { const?: unknown; type?: string }
    if (b && 'const' in b) values.push(b.const)
    else if (b?.type !== 'null') return null
  }
  return values.length ? values : null
}

const KIND_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
}

/**
 * The kinds of value a union takes, in words; null when a branch is not a plain type. Elysia's
 * numbers are unions with a numeric string (for query values): that branch is not a kind to name.
 */
function kindsOf(schema: unknown): string[] | null {
  const s = schema as { type?: unknown; format?: unknown; anyOf?: unknown[] } | undefined
  if (Array.isArray(s?.anyOf)) {
    const out: string[] = []
    for (const b of s.anyOf) {
      const branch = b as { type?: unknown; format?: unknown }
      if (branch?.type === 'string' && (branch.format === 'integer' || branch.format === 'numeric'))
        continue
      const k = kindsOf(b)
      if (!k) return null
      out.push(...k)
    }
    return out.length ? out : null
  }
  return typeof s?.type === 'string' ? [KIND_NAMES[s.type] ?? s.type] : null
}

/** What to fix, in words: enum errors list the allowed values rather than their types. */
function messageOf(e: SchemaIssue): string {
  const allowed = allowedValuesOf(e.schema)
  if (allowed) return `must be one of: ${allowed.map(String).join(', ')}`
  const kinds = Array.isArray((e.schema as { anyOf?: unknown })?.anyOf) ? kindsOf(e.schema) : null
  if (kinds) return `must be ${[...new Set(kinds)].join(' or ')}`
  return (e.summary ?? e.message ?? 'is invalid').replace(/^Property '[^']*' /, '')
}

/**
 * Turns an Elysia validation error's list into field errors with dotted paths, one per field: the
 * same field reported again (a union's branches, a schema checked twice) says nothing new.
 *
 * @example
 * fieldErrorsOf([{ path: '/category', schema: { anyOf: [{ const: 'Rent' }] } }])
 * // [{ field: 'category', message: 'must be one of: Rent' }]
 */
export function fieldErrorsOf(all: SchemaIssue[], whole = '(body)'): FieldError[] {
  const byField = new Map<string, FieldError>()
  for (const e of all) {
    const field = (e.path ?? '').replace(/^\//, '').replaceAll('/', '.') || whole
    if (!byField.has(field)) byField.set(field, { field, message: messageOf(e) })
  }
  return [...byField.values()]
}

/**
 * The query parameter a value came from, for a failed check Elysia reports without a name (a
 * numeric parameter out of bounds); `(query)` when it cannot be told.
 */
export function queryParameterOf(request: Request, value: unknown): string {
  const names = new Set<string>()
  for (const [name, given] of new URL(request.url).searchParams)
    if (given === String(value)) names.add(name)
  return names.size === 1 ? [...names][0]! : '(query)'
}

export { AppError }

const FULL = /^(SQLITE_FULL|ENOSPC|EDQUOT)/
const UNAVAILABLE =
  /^(SQLITE_(IOERR|BUSY|LOCKED|CANTOPEN|READONLY|PROTOCOL|NOMEM|CORRUPT)|EIO|EMFILE|ENFILE|EROFS|EAGAIN|ENOMEM)/
/**
 * What SQLite says once an I/O error rolled a transaction back by itself: the COMMIT (or
 * ROLLBACK) that follows finds none (SQLITE_ERROR, no I/O code of its own).
 */
const ROLLED_BACK = /cannot (commit|rollback) - no transaction is active/i
const OUT_OF_DESCRIPTORS = /^(EMFILE|ENFILE)/
const exhaustedListeners: Array<() => void> = []

/**
 * Called when a storage error says the process ran out of file descriptors (EMFILE, ENFILE, or a
 * database SQLite could not open): the daemon releases idle database handles then, so the next
 * requests find descriptors again without a restart.
 */
export function onDescriptorsExhausted(listener: () => void): void {
  exhaustedListeners.push(listener)
}

function descriptorsExhausted(): void {
  for (const l of exhaustedListeners) {
    try {
      l()
    } catch {}
  }
}

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
    if (FENCED.test(message)) {
      // A tenant move switched the placement while this request was writing (tenants/move-fence.ts).
      return new AppError('STORAGE_UNAVAILABLE', 'the tenant’s data has just moved; retry', {
        headers: { 'Retry-After': '1' },
        cause: e,
      })
    }
    if (OUT_OF_DESCRIPTORS.test(code) || /too many open files|unable to open/i.test(message))
      descriptorsExhausted()
    if (
      UNAVAILABLE.test(code) ||
      ROLLED_BACK.test(message) ||
      /disk I\/O error|database is locked|unable to open|malformed|too many open files/i.test(
        message,
      )
    ) {
      return new AppError('STORAGE_UNAVAILABLE', 'the storage failed; retry in a moment', {
        headers: { 'Retry-After': '1' },
        cause: e,
      })
    }
  }
  return null
}
