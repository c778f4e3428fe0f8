import { AppError } from '../kernel/errors.ts'
import { appErrorResponse, problemResponse, storageError } from '../kernel/problem.ts'
import { OWNER_HEADER } from '../kernel/tenant-owner.ts'
import { BreakerOpen } from './breaker.ts'
import type { RateVerdict } from './rate-limit.ts'

/** Hop-by-hop headers, and what one part tells the gateway only (tenant-owner.ts `OWNER_HEADER`). */
const RESPONSE_DROP = ['connection', 'keep-alive', 'transfer-encoding', OWNER_HEADER]

/** The upstream response with the gateway's headers, in place when its headers are mutable. */
export function withHeaders(
  upstream: Response,
  rid: string,
  verdict: RateVerdict | undefined,
): Response {
  let out = upstream
  try {
    upstream.headers.set('x-request-id', rid)
  } catch {
    out = new Response(upstream.body, {
      status: upstream.status,
      statusText: upstream.statusText,
      headers: new Headers(upstream.headers),
    })
    out.headers.set('x-request-id', rid)
  }
  for (const h of RESPONSE_DROP) out.headers.delete(h)
  setRateHeaders(out.headers, verdict)
  return out
}

export function setRateHeaders(h: Headers, v: RateVerdict | undefined): void {
  if (!v) return
  h.set('ratelimit-limit', String(v.limit))
  h.set('ratelimit-remaining', String(v.remaining))
  h.set('ratelimit-reset', String(v.reset))
}

export function errorResponse(err: unknown, rid: string, service: string | undefined): Response {
  if (err instanceof BreakerOpen) {
    return problemResponse(
      {
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        detail: `${service} is failing; its circuit breaker is open`,
      },
      rid,
      { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))) },
    )
  }
  if (err instanceof AppError) return appErrorResponse(err, rid)
  const storage = storageError(err)
  if (storage) return appErrorResponse(storage, rid)
  return problemResponse(
    { status: 500, code: 'INTERNAL', detail: 'an internal error occurred' },
    rid,
  )
}
