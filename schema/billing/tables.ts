import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * Billing's tables all live in the platform database (`platform/billing.db`): billing is the
 * control plane of every tenant's subscription. Every row carries `tenant_id` where it belongs to
 * a tenant. Money in cents.
 */

/** Subscription plans; free/pro/enterprise are seeded from schema/plans.ts. Limits/features JSON. */
export const plans = sqliteTable('plans', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  priceCents: integer('price_cents').notNull(),
  currency: text('currency').notNull(),
  interval: text('interval').notNull(),
  limits: text('limits').notNull(),
  features: text('features').notNull(),
  /** Price in cents per unit used past a limit, by metric. */
  overage: text('overage').notNull(),
  createdAt: text('created_at').notNull(),
  /**
   * free | pro | enterprise: the isolation tier a plan puts a tenant in (DESIGN §3). Null on rows
   * made before tiers were stored: a built-in plan is its own tier, any other is pro when priced.
   */
  tier: text('tier'),
})

/** One subscription per tenant. Periods are anchored on `billing_anchor` (month n ends at anchor+n). */
export const subscriptions = sqliteTable('subscriptions', {
  tenantId: text('tenant_id').primaryKey(),
  id: text('id').notNull(),
  /** The tenant's display name as the tenant service last announced it (for invoices). */
  tenantName: text('tenant_name'),
  planId: text('plan_id').notNull(),
  /**
   * Raised by every plan change (1 when the subscription starts on its first plan); each
   * `subscriptions.changed` event carries it, so a consumer applies a plan only when it is newer
   * than the one it already applied, whatever order the events reach it in.
   */
  planRevision: integer('plan_revision').notNull().default(0),
  /** The plan the current period started on: its base fee is invoiced at period end. */
  periodPlanId: text('period_plan_id').notNull(),
  status: text('status').notNull(),
  billingAnchor: text('billing_anchor').notNull(),
  periodIndex: integer('period_index').notNull(),
  currentPeriodStart: text('current_period_start').notNull(),
  currentPeriodEnd: text('current_period_end').notNull(),
  gracePeriodEnds: text('grace_period_ends'),
  cancelAtPeriodEnd: integer('cancel_at_period_end', { mode: 'boolean' }).notNull(),
  /** Credit (cents) carried from downgrades to the next invoice. */
  creditCents: integer('credit_cents').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
})

/** History of every subscription change; each row is also a `subscriptions.changed` event. */
export const subscriptionEvents = sqliteTable(
  'subscription_events',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    reason: text('reason').notNull(),
    plan: text('plan').notNull(),
    previousPlan: text('previous_plan'),
    status: text('status').notNull(),
    previousStatus: text('previous_status'),
    periodStart: text('period_start').notNull(),
    periodEnd: text('period_end').notNull(),
    occurredAt: text('occurred_at').notNull(),
  },
  (t) => [index('subscription_events_tenant').on(t.tenantId, t.occurredAt)],
)

/** Mid-period plan changes; each becomes a proration line on the next invoice. */
export const planChanges = sqliteTable(
  'plan_changes',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    fromPlan: text('from_plan').notNull(),
    toPlan: text('to_plan').notNull(),
    changedAt: text('changed_at').notNull(),
    periodStart: text('period_start').notNull(),
    periodEnd: text('period_end').notNull(),
    remainingSeconds: integer('remaining_seconds').notNull(),
    periodSeconds: integer('period_seconds').notNull(),
    amountCents: integer('amount_cents').notNull(),
    invoiceId: text('invoice_id'),
  },
  (t) => [index('plan_changes_tenant').on(t.tenantId, t.invoiceId)],
)

/** Metered usage, one row per event id (the idempotency key), attributed to a billing period. */
export const usageRecords = sqliteTable(
  'usage_records',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    eventId: text('event_id').notNull(),
    metric: text('metric').notNull(),
    quantity: integer('quantity').notNull(),
    periodStart: text('period_start').notNull(),
    source: text('source').notNull(),
    recordedAt: text('recorded_at').notNull(),
  },
  (t) => [
    uniqueIndex('usage_records_event').on(t.tenantId, t.eventId),
    index('usage_records_period').on(t.tenantId, t.periodStart, t.metric, t.quantity),
  ],
)

/** Invoices (DESIGN §11). `lines` is JSON; numbers come from the `counters` row without gaps. */
export const invoices = sqliteTable(
  'invoices',
  {
    id: text('id').primaryKey(),
    number: text('number').notNull(),
    tenantId: text('tenant_id').notNull(),
    status: text('status').notNull(),
    planId: text('plan_id').notNull(),
    periodStart: text('period_start').notNull(),
    periodEnd: text('period_end').notNull(),
    lines: text('lines').notNull(),
    subtotalCents: integer('subtotal_cents').notNull(),
    totalCents: integer('total_cents').notNull(),
    currency: text('currency').notNull(),
    issuedAt: text('issued_at').notNull(),
    dueAt: text('due_at').notNull(),
    paidAt: text('paid_at'),
    voidedAt: text('voided_at'),
  },
  (t) => [
    uniqueIndex('invoices_number').on(t.number),
    uniqueIndex('invoices_period').on(t.tenantId, t.periodStart),
    index('invoices_tenant').on(t.tenantId, t.id),
    index('invoices_status').on(t.status, t.dueAt),
  ],
)

/** STK push attempts made to pay an invoice, and what the payment service said about them. */
export const invoicePayments = sqliteTable(
  'invoice_payments',
  {
    id: text('id').primaryKey(),
    invoiceId: text('invoice_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    checkoutRequestId: text('checkout_request_id'),
    amountCents: integer('amount_cents').notNull(),
    phoneNumber: text('phone_number'),
    status: text('status').notNull(),
    resultDesc: text('result_desc'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    index('invoice_payments_invoice').on(t.invoiceId),
    index('invoice_payments_checkout').on(t.checkoutRequestId),
  ],
)

/** Gap-free sequences (invoice numbers), incremented in the transaction that uses the value. */
export const counters = sqliteTable('counters', {
  name: text('name').primaryKey(),
  value: integer('value').notNull(),
})
