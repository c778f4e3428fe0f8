import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { REPLAYED_HEADER } from '../kernel/idempotency.ts'
import { wasReplayed } from './idempotency.ts'
import { CallbackAck, CallbackQuery, ProviderRequestBody, ProviderRequestView } from './model.ts'

/** What the payment routes share: security, the caller's address, the async request routes. */

export const secured = { security: [{ bearer: [] }] }

/** A bearer-secured payment route's OpenAPI detail. */
export const securedDetail = (summary: string) => ({ summary, tags: ['payments'], ...secured })

/** `?tenant_id=`: the operator names a tenant; anyone else reads their own. */
export const TenantQuery = t.Object({ tenant_id: t.Optional(t.String()) })

/**
 * The caller's address for the callback allow-list: what the gateway forwarded under its hop
 * signature (the rightmost entry, added by the gateway itself), otherwise the socket's peer. An
 * X-Forwarded-For sent straight to the payment port is not believed.
 */
export function sourceIp(
  ctx: ServiceContext,
  request: Request,
  server: { requestIP(r: Request): { address: string } | null } | null,
): string | null {
  const xff = ctx.hop?.trusted(request.headers, 'x-forwarded-for')
  if (xff) return xff.split(',').pop()!.trim() || null
  return server?.requestIP(request)?.address ?? null
}

const ASYNC_SUMMARY = {
  status:
    'Ask the provider about one of your M-Pesa receipts (Transaction Status); the result arrives at our result URL',
  balance:
    'Ask the provider for the balance of a shortcode you hold (Account Balance); the result is published for cashflow',
  reversal: 'Reverse one of your M-Pesa receipts (Reversal); the result arrives at our result URL',
} as const

export const asyncStart = (kind: keyof typeof ASYNC_SUMMARY, auth: 'pay' | 'admin') => ({
  auth,
  body: ProviderRequestBody,
  response: { 202: ProviderRequestView },
  detail: { summary: ASYNC_SUMMARY[kind], tags: ['payments'], ...secured },
})

export const asyncRead = (kind: string) => ({
  auth: 'read' as const,
  params: t.Object({ id: t.String() }),
  response: { 200: ProviderRequestView },
  detail: { summary: `The ${kind} request and its result`, tags: ['payments'], ...secured },
})

/** A provider callback: public (authenticated by the token in its URL), its body read as text. */
export const providerCallback = (summary: string) => ({
  parse: 'text' as const,
  query: CallbackQuery,
  response: { 200: CallbackAck },
  detail: { summary, tags: ['payments'] },
})

/**
 * Answers `status` with `answer`, marked `Idempotent-Replayed: true` when it is the stored answer
 * of an Idempotency-Key used before.
 */
export function answered<T>(
  set: { status?: number | string; headers: Record<string, string | number> },
  status: number,
  answer: T,
): T {
  set.status = status
  if (wasReplayed(answer)) set.headers[REPLAYED_HEADER] = 'true'
  return answer
}
