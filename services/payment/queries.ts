import { and, desc, eq, inArray, lt } from 'drizzle-orm'
import { payments } from '../../schema/payment/tables.ts'
import { NotFound } from '../kernel/errors.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import type { PaymentDeps } from './deps.ts'
import type { ProviderIndex } from './provider-index.ts'
import { findPayment, getDisbursement, type PaymentRow } from './rows.ts'
import { disbursementView, paymentView } from './views.ts'

export interface ListQuery {
  tenant_id?: string | undefined
  limit?: number | undefined
  cursor?: string | undefined
  status?: string | undefined
}

/** Reads: a payment's status, a page of payments, a disbursement. Every read filters by tenant. */
export function createQueries(deps: PaymentDeps, index: ProviderIndex) {
  /** The operator reads any tenant's payment; everyone else only their own (404 otherwise). */
  const tenantOf = (actor: Actor, idOrRef: string) =>
    (isOperator(actor) ? index.tenantOf(idOrRef) : null) ?? actor.tenantId

  function status(actor: Actor, checkoutId: string) {
    const tid = tenantOf(actor, checkoutId)
    const p = findPayment(deps.tenantDb(tid), tid, checkoutId)
    if (!p) throw new NotFound('payment', checkoutId)
    return paymentView(p)
  }

  /** One payment by our id or the provider's checkout id, with our id (as the list has it). */
  function get(actor: Actor, id: string) {
    const tid = tenantOf(actor, id)
    const p = findPayment(deps.tenantDb(tid), tid, id)
    if (!p) throw new NotFound('payment', id)
    return { id: p.id, ...paymentView(p) }
  }

  function list(actor: Actor, q: ListQuery) {
    const tid = tenantFor(actor, q.tenant_id)
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 500)
    const t = payments
    const status = !q.status
      ? undefined
      : q.status === 'pending'
        ? inArray(t.status, ['pending', 'initiating'])
        : eq(t.status, q.status)
    const rows = deps
      .tenantDb(tid)
      .orm.select()
      .from(t)
      .where(and(eq(t.tenantId, tid), q.cursor ? lt(t.id, q.cursor) : undefined, status))
      .orderBy(desc(t.id))
      .limit(limit + 1)
      .all() as PaymentRow[]
    const has_more = rows.length > limit
    const page = rows.slice(0, limit)
    return {
      data: page.map((p) => ({ id: p.id, ...paymentView(p) })),
      next_cursor: has_more ? page[page.length - 1]!.id : null,
      has_more,
    }
  }

  function b2cStatus(actor: Actor, id: string) {
    const tid = tenantOf(actor, id)
    const d = getDisbursement(deps.tenantDb(tid), tid, id)
    if (!d) throw new NotFound('disbursement', id)
    return disbursementView(d)
  }

  return { status, get, list, b2cStatus }
}
