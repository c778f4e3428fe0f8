import { and, eq } from 'drizzle-orm'
import { invoicePayments, invoices, subscriptions } from '../../schema/billing/tables.ts'
import { isInvoicePayment, type TopicEvent, topics } from '../../schema/events.ts'
import type { TopicsOf } from '../../schema/topic-registry.ts'
import { handleOnce } from '../kernel/events.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { type Billing, DAY_MS } from './billing.ts'
import { findPlan } from './plans.ts'
import { markInvoicePaid, notePaymentFailed } from './settle.ts'
import { cancelSubscription, ensureSubscription } from './subscriptions.ts'
import { recordUsage, syncEntitlements } from './usage.ts'

const INVOICE_NUMBER = /^INV-\d{6,}$/

/**
 * Subscribes billing to its inputs (DESIGN §7, §10). Each handler is idempotent by event id: usage
 * through the usage table's (tenant, event id) key, the rest through the inbox.
 */
export async function subscribeBilling(b: Billing): Promise<void> {
  const on = <T extends TopicsOf<'billing'>>(topic: T, fn: (e: TopicEvent<T>) => void) =>
    subscribe(b.ctx, 'billing', topic, (event) => {
      // The platform is nobody's subscriber: its events are not billed.
      if (event.tenant_id === PLATFORM_TENANT) {
        b.ctx.log.warn('ignored an event without a usable tenant', { topic, event_id: event.id })
        return
      }
      fn(event)
    })
  await on(topics.tenantsChanged, (e) => onTenant(b, e))
  await on(topics.usage, (e) => onUsage(b, e))
  await on(topics.transactionsSuccess, (e) => onPaymentSuccess(b, e))
  await on(topics.transactionsFailed, (e) => onPaymentFailed(b, e))
}

/**
 * When a subscription starts: the tenant's creation time from the event, unless it lies in the
 * future or more than a day back (a replay, or an event made by hand), then on arrival, so an old
 * event never makes the cycle invoice months nobody used.
 */
function eventTime(b: Billing, occurredAt: string | undefined): Date {
  const now = b.ctx.clock.now()
  const t = occurredAt ? new Date(occurredAt) : now
  const ok = !Number.isNaN(t.getTime()) && t <= now && now.getTime() - t.getTime() <= DAY_MS
  return ok ? t : now
}

/**
 * A tenant was created (its subscription starts on the plan the operator chose), renamed (the
 * name invoices carry) or deleted (canceled). Billing owns the plan: an `updated` event never
 * changes it, since plan changes reach billing through its upgrade door and the tenant follows
 * `subscriptions.changed`. A subscription that already exists (made lazily, or moved on through
 * the door before this event arrived) keeps its plan.
 */
export function onTenant(b: Billing, e: TopicEvent<typeof topics.tenantsChanged>): void {
  const tenantId = e.tenant_id
  const data = e.data
  let touched = false
  handleOnce(b.db, 'billing.tenants', e.id, () => {
    if (data.change === 'deleted') {
      cancelSubscription(b, tenantId, b.ctx.clock.now())
      touched = true
      return
    }
    if (data.change === 'created') {
      const plan = data.plan && findPlan(b.db, data.plan) ? data.plan : null
      if (data.plan && !plan)
        b.ctx.log.warn('tenant event names an unknown plan', {
          tenant_id: tenantId,
          plan: data.plan,
        })
      const { created } = ensureSubscription(b, {
        tenantId,
        at: eventTime(b, e.occurred_at),
        plan: plan ?? 'free',
        tenantName: data.name ?? null,
      })
      touched = created
      if (created) return
    }
    if (data.name)
      b.db.orm
        .update(subscriptions)
        .set({ tenantName: data.name })
        .where(eq(subscriptions.tenantId, tenantId))
        .run()
  })
  if (touched) syncEntitlements(b, tenantId, b.ctx.clock.now())
}

export function onUsage(b: Billing, e: TopicEvent<typeof topics.usage>): void {
  const { metric, quantity } = e.data
  recordUsage(
    b,
    { tenantId: e.tenant_id, metric, quantity, eventId: e.id, source: 'event' },
    b.ctx.clock.now(),
  )
}

/**
 * A payment whose account reference is an invoice number of the same tenant pays that invoice
 * when it covers the total (STK push takes whole shillings, so the amount asked is rounded up).
 */
export function onPaymentSuccess(
  b: Billing,
  e: TopicEvent<typeof topics.transactionsSuccess>,
): void {
  // Most payments are not for invoices: leave them without an inbox row.
  if (!isInvoicePayment(e.data)) return
  const ref = e.data.account_reference?.trim()
  const checkout = e.data.checkout_request_id
  if (!invoiceOfPayment(b, e.tenant_id, ref, checkout)) return
  const now = b.ctx.clock.now()
  let paid = false
  handleOnce(b.db, 'billing.payments', e.id, () => {
    const inv = invoiceOfPayment(b, e.tenant_id, ref, checkout)
    if (!inv) return
    const amountCents = Math.round(Number(e.data.amount) * 100)
    if (!(amountCents >= inv.totalCents)) {
      notePaymentFailed(b, {
        tenantId: e.tenant_id,
        checkoutRequestId: checkout ?? e.data.transaction_id,
        status: 'underpaid',
        resultDesc: `paid ${e.data.amount}, invoice total is ${inv.totalCents / 100}`,
        invoiceNumber: inv.number,
        amountCents,
        phone: e.data.counterparty_phone ?? null,
        at: now,
      })
      return
    }
    markInvoicePaid(b, { invoice: inv, at: now, checkoutRequestId: checkout ?? null })
    paid = true
  })
  if (paid) syncEntitlements(b, e.tenant_id, now)
}

/**
 * The invoice a payment of this tenant is for: by account reference (the invoice number, as billing
 * asks for it; the invoice id is accepted too, as DESIGN §10 words it), else by the checkout
 * request id of an STK push billing started. Payments for anything else are not billing's.
 */
function invoiceOfPayment(
  b: Billing,
  tenantId: string,
  ref: string | undefined,
  checkout: string | undefined,
) {
  const ofTenant = (cond: ReturnType<typeof eq>) =>
    b.db.orm
      .select()
      .from(invoices)
      .where(and(cond, eq(invoices.tenantId, tenantId)))
      .get()
  if (ref && INVOICE_NUMBER.test(ref.toUpperCase())) {
    const inv = ofTenant(eq(invoices.number, ref.toUpperCase()))
    if (inv) return inv
  }
  if (ref?.startsWith('inv_')) {
    const inv = ofTenant(eq(invoices.id, ref))
    if (inv) return inv
  }
  if (checkout) {
    const attempt = b.db.orm
      .select({ invoiceId: invoicePayments.invoiceId })
      .from(invoicePayments)
      .where(
        and(
          eq(invoicePayments.checkoutRequestId, checkout),
          eq(invoicePayments.tenantId, tenantId),
        ),
      )
      .get()
    if (attempt) return ofTenant(eq(invoices.id, attempt.invoiceId))
  }
  return null
}

export function onPaymentFailed(b: Billing, e: TopicEvent<typeof topics.transactionsFailed>): void {
  const ref = e.data.account_reference.trim().toUpperCase()
  if (!e.data.checkout_request_id) return
  handleOnce(b.db, 'billing.payments', e.id, () => {
    notePaymentFailed(b, {
      tenantId: e.tenant_id,
      checkoutRequestId: e.data.checkout_request_id,
      status: e.data.status || 'failed',
      resultDesc: e.data.result_desc ?? null,
      invoiceNumber: ref,
      amountCents: Math.round(Number(e.data.amount ?? 0) * 100),
      phone: e.data.phone_number ?? null,
      at: b.ctx.clock.now(),
    })
  })
}
