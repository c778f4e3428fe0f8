/**
 * Kernel errors: business logic throws these and never an HTTP status. One renderer
 * (`problem.ts`) maps each code to its status and a problem+json body.
 *
 * @example
 * throw new NotFound('payment', checkoutRequestId)
 */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'MALFORMED_BODY'
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'INVALID_SIGNATURE'
  | 'FORBIDDEN'
  | 'TENANT_MISMATCH'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'TENANT_NOT_FOUND'
  | 'TENANT_ELSEWHERE'
  | 'CONFLICT'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'PHONE_BUSY'
  | 'LIMIT_EXCEEDED'
  | 'SUBSCRIPTION_SUSPENDED'
  | 'FEATURE_DISABLED'
  | 'STATEMENT_PASSWORD_REQUIRED'
  | 'STATEMENT_PASSWORD_INCORRECT'
  | 'STATEMENT_TOO_LARGE'
  | 'STATEMENT_UNREADABLE'
  | 'C2B_OUT_OF_RANGE'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'BAD_GATEWAY'
  | 'PROVIDER_MISCONFIGURED'
  | 'SERVICE_UNAVAILABLE'
  | 'STORAGE_UNAVAILABLE'
  | 'STORAGE_FULL'
  | 'TIMEOUT'
  | 'INTERNAL'

export const statusOf: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 422,
  MALFORMED_BODY: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  TENANT_MISMATCH: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  TENANT_NOT_FOUND: 404,
  TENANT_ELSEWHERE: 421,
  CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  /** An M-Pesa prompt is already open on this phone (ours or the provider's lock): Retry-After. */
  PHONE_BUSY: 409,
  LIMIT_EXCEEDED: 402,
  SUBSCRIPTION_SUSPENDED: 402,
  FEATURE_DISABLED: 402,
  STATEMENT_PASSWORD_REQUIRED: 422,
  STATEMENT_PASSWORD_INCORRECT: 422,
  /** A statement file past a reading limit (pages, rows, unpacked bytes, nesting, time). */
  STATEMENT_TOO_LARGE: 422,
  /** A file that is not a statement mmp can read (a photo, a damaged or hostile file). */
  STATEMENT_UNREADABLE: 422,
  /** A C2B callback whose amount or time Daraja never sends (1–250,000 whole shillings, now ± a day). */
  C2B_OUT_OF_RANGE: 422,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  BAD_GATEWAY: 502,
  /** The provider refused the platform's own settings (credentials, shortcode): the operator fixes. */
  PROVIDER_MISCONFIGURED: 502,
  SERVICE_UNAVAILABLE: 503,
  STORAGE_UNAVAILABLE: 503,
  STORAGE_FULL: 507,
  TIMEOUT: 504,
  INTERNAL: 500,
}

export interface FieldError {
  field: string
  message: string
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly detail: string
  readonly errors: FieldError[] | undefined
  readonly extra: Record<string, unknown> | undefined
  readonly headers: Record<string, string> | undefined

  constructor(
    code: ErrorCode,
    detail: string,
    opts: {
      errors?: FieldError[]
      extra?: Record<string, unknown>
      headers?: Record<string, string>
      cause?: unknown
    } = {},
  ) {
    super(detail, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'AppError'
    this.code = code
    this.detail = detail
    this.errors = opts.errors
    this.extra = opts.extra
    this.headers = opts.headers
  }

  get status(): number {
    return statusOf[this.code]
  }
}

export class ValidationError extends AppError {
  constructor(detail: string, errors: FieldError[] = []) {
    super('VALIDATION_FAILED', detail, { errors })
  }
}

/** One field is wrong: `throw invalidField('amount', 'must be a whole number of shillings')`. */
export function invalidField(field: string, message: string): ValidationError {
  return new ValidationError(`${field}: ${message}`, [{ field, message }])
}

export class NotFound extends AppError {
  constructor(what: string, id?: string) {
    super('NOT_FOUND', id ? `${what} ${id} was not found` : `${what} was not found`)
  }
}

export class Unauthenticated extends AppError {
  constructor(detail = 'a valid bearer token is required') {
    super('UNAUTHENTICATED', detail, { headers: { 'WWW-Authenticate': 'Bearer' } })
  }
}

export class Forbidden extends AppError {
  constructor(detail = 'your role does not allow this') {
    super('FORBIDDEN', detail)
  }
}

export class Conflict extends AppError {
  constructor(detail: string) {
    super('CONFLICT', detail)
  }
}

/** A plan limit is reached: 402 naming the limit, its maximum and current use. */
export class LimitExceeded extends AppError {
  constructor(limit: string, max: number, used: number) {
    super('LIMIT_EXCEEDED', `the plan limit '${limit}' of ${max} is reached (used ${used})`, {
      extra: { limit, max, used },
    })
  }
}

export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', 'too many requests', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    })
  }
}

/** The tenant does not exist (never created, or erased): 404 on every door, nothing written. */
export class TenantNotFound extends AppError {
  constructor(tenantId: string) {
    super('TENANT_NOT_FOUND', `tenant ${tenantId} does not exist`, {
      extra: { tenant_id: tenantId },
    })
  }
}

/**
 * The tenant belongs to another instance of this service (DESIGN §12): 421 Misdirected Request,
 * so a caller whose instance list is out of date finds out instead of reading an empty database.
 */
export class TenantElsewhere extends AppError {
  /** `owner`: the instance this one believes owns the tenant, sent as `x-mmp-owner`. */
  constructor(tenantId: string, owner?: string) {
    super('TENANT_ELSEWHERE', `tenant ${tenantId} is served by another instance of this service`, {
      extra: { tenant_id: tenantId },
      ...(owner ? { headers: { 'x-mmp-owner': owner } } : {}),
    })
  }
}

/** A request with this Idempotency-Key is still being served: retry after a moment. */
export class IdempotencyInProgress extends AppError {
  constructor(retryAfterSeconds = 1) {
    super('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still in progress', {
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    })
  }
}

/** The path exists with other methods: 405 with `Allow` listing them. */
export class MethodNotAllowed extends AppError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${allowed.join(', ')}`, {
      headers: { Allow: allowed.join(', ') },
      extra: { allowed },
    })
  }
}
