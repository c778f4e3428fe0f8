import type { Route } from '../../schema/routes.ts'

type Obj = Record<string, unknown>

const FieldError = {
  type: 'object',
  required: ['field', 'message'],
  properties: {
    field: { type: 'string', description: 'the field, as a dotted path or a header name' },
    message: { type: 'string' },
  },
}

const problemProperties = {
  type: { type: 'string', format: 'uri', description: 'https://mmp.dev/problems/{code}' },
  title: { type: 'string' },
  status: { type: 'integer', minimum: 400, maximum: 599 },
  detail: { type: 'string' },
  code: {
    type: 'string',
    pattern: '^[A-Z][A-Z_]*$',
    description: 'the error code (schema/errors.ts), SCREAMING_SNAKE',
  },
  request_id: { type: 'string', description: 'the X-Request-ID of the request' },
}

/**
 * The components every merged document shares: the problem+json bodies, the rate-limit response
 * headers and the gateway's request headers (DESIGN §5–§6).
 */
export const sharedComponents = {
  schemas: {
    FieldError,
    Problem: {
      title: 'Problem',
      description:
        'RFC 9457 problem details; some codes add their numbers (LIMIT_EXCEEDED: limit, max, used; TENANT_NOT_FOUND: tenant_id).',
      type: 'object',
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: {
        ...problemProperties,
        errors: { type: 'array', items: { $ref: '#/components/schemas/FieldError' } },
      },
      additionalProperties: true,
      example: {
        type: 'https://mmp.dev/problems/not-found',
        title: 'Not Found',
        status: 404,
        detail: 'payment ws_CO_123 was not found',
        code: 'NOT_FOUND',
        request_id: 'req_01JC2Y8M3V9K4T6P0Q1R2S3T4U',
      },
    },
    ValidationProblem: {
      title: 'ValidationProblem',
      description: 'A 422: every field that is wrong, each with its message.',
      type: 'object',
      required: ['type', 'title', 'status', 'detail', 'code', 'errors'],
      properties: {
        ...problemProperties,
        status: { type: 'integer', const: 422 },
        code: {
          type: 'string',
          enum: [
            'VALIDATION_FAILED',
            'STATEMENT_PASSWORD_REQUIRED',
            'STATEMENT_PASSWORD_INCORRECT',
            'STATEMENT_TOO_LARGE',
            'STATEMENT_UNREADABLE',
            'C2B_OUT_OF_RANGE',
          ],
        },
        errors: { type: 'array', items: { $ref: '#/components/schemas/FieldError' } },
      },
      additionalProperties: true,
      example: {
        type: 'https://mmp.dev/problems/validation-failed',
        title: 'Unprocessable Content',
        status: 422,
        detail: 'amount: must be at least 1',
        code: 'VALIDATION_FAILED',
        request_id: 'req_01JC2Y8M3V9K4T6P0Q1R2S3T4U',
        errors: [{ field: 'amount', message: 'must be at least 1' }],
      },
    },
  },
  headers: {
    'X-Request-ID': {
      description: "The request's id (the caller's, when valid, or a new one)",
      schema: { type: 'string' },
    },
    'RateLimit-Limit': {
      description:
        "Requests allowed per window (the tenant's tier, or per client IP on public routes)",
      schema: { type: 'integer', minimum: 0 },
    },
    'RateLimit-Remaining': {
      description: 'Requests left in the current window',
      schema: { type: 'integer', minimum: 0 },
    },
    'RateLimit-Reset': {
      description: 'Seconds until the window resets',
      schema: { type: 'integer', minimum: 0 },
    },
    'Retry-After': {
      description: 'Seconds to wait before retrying',
      schema: { type: 'integer', minimum: 1 },
    },
  },
  parameters: {
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'A retry with the same key and body answers as the first request did; the same key with another body is 409 IDEMPOTENCY_KEY_REUSED; while the first is running, 409 IDEMPOTENCY_IN_PROGRESS with Retry-After.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
    RequestTimeout: {
      name: 'X-Request-Timeout',
      in: 'header',
      required: false,
      description:
        "Milliseconds the caller will wait; shortens the route's budget (the answer past it is 504 TIMEOUT).",
      schema: { type: 'integer', minimum: 1 },
    },
  },
} as const

const problemContent = (schema = 'Problem') => ({
  'application/problem+json': { schema: { $ref: `#/components/schemas/${schema}` } },
})
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })
const rateHeaders = {
  'RateLimit-Limit': ref('RateLimit-Limit'),
  'RateLimit-Remaining': ref('RateLimit-Remaining'),
  'RateLimit-Reset': ref('RateLimit-Reset'),
}

function problem(description: string, extraHeaders: Obj = {}, schema = 'Problem'): Obj {
  return {
    description,
    headers: { 'X-Request-ID': ref('X-Request-ID'), ...extraHeaders },
    content: problemContent(schema),
  }
}

/** Creates that can meet an existing resource (an email, a slug, a shortcode, a plan id). */
const CONFLICTING = new Set([
  'POST /api/v1/tenants',
  'POST /api/v1/auth/users',
  'POST /api/v1/auth/accept-invite',
  'POST /api/v1/tenants/:tenant_id/users',
  'POST /api/v1/billing/plans',
  'POST /api/v1/billing/invoices/:invoice_id/pay',
  'POST /api/v1/billing/invoices/:invoice_id/void',
  'POST /api/v1/billing/subscriptions/upgrade',
  'POST /api/v1/categorize/rules',
  'POST /api/v1/payments/c2b/register',
  'POST /api/v1/webhooks/deliveries/:id/replay',
  'POST /api/v1/webhooks/deliveries/replay',
])

const hasTenantId = (op: Obj): boolean =>
  JSON.stringify(op.parameters ?? []).includes('"tenant_id"') ||
  JSON.stringify(op.requestBody ?? {}).includes('"tenant_id"')

/**
 * Whether an operation takes the Idempotency-Key header: every route the manifest marks a create
 * (the kernel's `idempotent: true` routes and the payment service's own), or one whose summary
 * says it takes one.
 */
export const takesIdempotencyKey = (op: Obj, route?: Route): boolean =>
  route?.create === true || /Idempotency-Key/.test(`${op.summary ?? ''} ${op.description ?? ''}`)

/**
 * The problem+json answers an operation can give, from what the route manifest knows of it:
 * a token route 401/403/429 (and 402 for a write of a suspended or over-limit tenant), a public
 * one 429 per client IP, a tenant or an id in the path or a `tenant_id` 404, a body 400/413/422,
 * parameters 422, a create that can meet an existing resource 409; `default` for the rest
 * (405 on another method, 5xx).
 */
export function errorResponses(route: Route | undefined, op: Obj, method: string): Obj {
  const out: Obj = {}
  const body = op.requestBody !== undefined
  const write = method !== 'get'
  const hasParams = Array.isArray(op.parameters) && op.parameters.length > 0
  if (body) out['400'] = problem('MALFORMED_BODY: the body could not be parsed')
  if (!route || route.access === 'token') {
    out['401'] = problem('UNAUTHENTICATED: no valid bearer token', {
      'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer' },
    })
    if (write)
      out['402'] = problem(
        'SUBSCRIPTION_SUSPENDED or LIMIT_EXCEEDED: the tenant may not write this now',
      )
    out['403'] = problem(
      "FORBIDDEN or TENANT_MISMATCH: the token's role or tenant does not allow this",
    )
  }
  if (route?.tenantAt !== undefined || hasTenantId(op) || route?.path.includes('/:'))
    out['404'] = problem(
      'NOT_FOUND, or TENANT_NOT_FOUND for a tenant that does not exist (another tenant reads as missing)',
    )
  const key = route ? `${route.method} ${route.path}` : ''
  if (CONFLICTING.has(key) || takesIdempotencyKey(op, route))
    out['409'] = problem('CONFLICT, IDEMPOTENCY_KEY_REUSED or IDEMPOTENCY_IN_PROGRESS', {
      'Retry-After': ref('Retry-After'),
    })
  if (body) out['413'] = problem('PAYLOAD_TOO_LARGE: the body is over its route limit')
  if (body || hasParams) out['422'] = problem('VALIDATION_FAILED', {}, 'ValidationProblem')
  if (route?.access !== 'provider')
    out['429'] = problem('RATE_LIMITED', { ...rateHeaders, 'Retry-After': ref('Retry-After') })
  out.default = problem(
    'Any other error (405 with Allow, 421 TENANT_ELSEWHERE from an instance that does not own the tenant, 5xx): problem+json',
  )
  return out
}

/** The rate-limit headers every answer through the gateway carries (not provider callbacks). */
export function successHeaders(route: Route | undefined): Obj {
  return {
    'X-Request-ID': ref('X-Request-ID'),
    ...(route?.access === 'provider' ? {} : rateHeaders),
  }
}
