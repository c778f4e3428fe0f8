import { t } from 'elysia'
import { Entitlements } from './profiles.ts'
import { TENANT_ID_PATTERN } from './tenant-id.ts'
import { KINDS, type Kind } from './vocabulary.ts'

/**
 * The only cross-service contract: broker topic names and their payload schemas (DESIGN §7).
 * Every message is an envelope `{id, type, version, tenant_id, occurred_at, data}`; `type` is the
 * topic name. `topicSchemas` maps each topic to the schema of its `data`: publishers are held to
 * it at compile time (`emitEvent`), subscribers at run time (the kernel's `subscribe`).
 */
export const topics = {
  transactionsSuccess: 'mobilemoney.transactions.success',
  transactionsFailed: 'mobilemoney.transactions.failed',
  transactionsRaw: 'mobilemoney.transactions.raw',
  transactionsCategorized: 'mobilemoney.transactions.categorized',
  statementsProcessed: 'mobilemoney.statements.processed',
  usage: 'mobilemoney.usage',
  subscriptionsChanged: 'mobilemoney.subscriptions.changed',
  balanceLow: 'mobilemoney.balance.low',
  tenantsChanged: 'mobilemoney.tenants.changed',
  authRevoked: 'mobilemoney.auth.revoked',
  balanceReported: 'mobilemoney.balance.reported',
  entitlementsChanged: 'mobilemoney.entitlements.changed',
} as const

export type Topic = (typeof topics)[keyof typeof topics]

export const EventEnvelope = t.Object({
  id: t.String({ minLength: 1 }),
  type: t.String(),
  version: t.Integer({ minimum: 1 }),
  tenant_id: t.String({ pattern: TENANT_ID_PATTERN.source }),
  occurred_at: t.String(),
  data: t.Record(t.String(), t.Unknown()),
})
export type EventEnvelope<D = Record<string, unknown>> = Omit<
  typeof EventEnvelope.static,
  'data'
> & {
  data: D
}

const TransactionSource = t.Union([
  t.Literal('payment'),
  t.Literal('statement'),
  t.Literal('sms'),
  t.Literal('api'),
])

/**
 * One channel's report of a receipted transaction, as it said it (the ledger keeps the first
 * report's amount and time; the others are kept for reconciliation). Set by the categorizer, which
 * merges every report of a receipt into one transaction.
 */
export const ReceiptReport = t.Object({
  source: TransactionSource,
  channel: t.Optional(t.String()),
  transaction_id: t.String(),
  occurred_at: t.String(),
  amount: t.Number(),
  direction: t.Union([t.Literal('in'), t.Literal('out')]),
  balance: t.Optional(t.Nullable(t.Number())),
  import_id: t.Optional(t.Nullable(t.String())),
})
export type ReceiptReport = typeof ReceiptReport.static

/** A transaction as it travels on the broker (raw, success and categorized topics). */
export const TransactionEvent = t.Object({
  transaction_id: t.String({ minLength: 1 }),
  occurred_at: t.String(),
  amount: t.Number(),
  direction: t.Union([t.Literal('in'), t.Literal('out')]),
  counterparty_name: t.Optional(t.Nullable(t.String())),
  counterparty_phone: t.Optional(t.Nullable(t.String())),
  description: t.String(),
  receipt_number: t.Optional(t.Nullable(t.String())),
  balance: t.Optional(t.Nullable(t.Number())),
  source: TransactionSource,
  user_id: t.Optional(t.Nullable(t.String())),
  category: t.Optional(t.String()),
  category_confidence: t.Optional(t.Number()),
  category_source: t.Optional(t.String()),
  rule_id: t.Optional(t.Nullable(t.String())),
  /** Set on payment-sourced transactions. */
  checkout_request_id: t.Optional(t.String()),
  account_reference: t.Optional(t.String()),
  /**
   * Stated by the publisher (payment) on transactions.success: 'invoice' when billing started the
   * payment to settle the platform's invoice. Read it through `isInvoicePayment`, never directly.
   */
  purpose: t.Optional(t.Literal('invoice')),
  /**
   * Set by payment on transactions.success: how the money moved. 'stk' a customer prompt, 'b2c' a
   * disbursement, 'c2b' a customer paying a till or paybill on their own, 'reversal' a reversed
   * transaction (direction 'out').
   */
  channel: t.Optional(
    t.Union([t.Literal('stk'), t.Literal('b2c'), t.Literal('c2b'), t.Literal('reversal')]),
  ),
  /** Set by the parser on statement rows: the import they came in. */
  import_id: t.Optional(t.Nullable(t.String())),
  /** What the money movement is (schema/vocabulary.ts KINDS); absent on older events. */
  kind: t.Optional(t.UnionEnum(KINDS)),
  /**
   * Which leg of its receipt this is (DESIGN §16 "Legs"): absent or '' the movement itself,
   * 'charge' its transaction charge, 'loan' the overdraft drawn for it, 'repay' a repayment.
   * Reports of one receipt join per leg (`ledgerKey`).
   */
  leg: t.Optional(t.String()),
  /**
   * Set by the categorizer on categorized transactions with a receipt number: every channel that
   * reported this receipt (one ledger, README "One ledger"). `transaction_id` stays the first
   * report's; a later report enriches it and never adds a transaction.
   */
  reports: t.Optional(t.Array(ReceiptReport)),
  /** Set by the parser on a row another channel reported first: it enriches that transaction. */
  matched: t.Optional(t.Boolean()),
})
export type TransactionEvent = typeof TransactionEvent.static

/**
 * The key reports of one ledger entry share (DESIGN §16): the receipt for the movement itself,
 * the receipt and its leg for the rows that share the receipt (its charge, a Fuliza draw…).
 */
export function ledgerKey(receipt: string, leg: string | null | undefined): string {
  return leg ? `${receipt}/${leg}` : receipt
}

/** What one channel said about a ledger entry: the report a merged transaction keeps of it. */
export function reportOf(t: TransactionEvent): ReceiptReport {
  return {
    source: t.source,
    ...(t.channel ? { channel: t.channel } : {}),
    transaction_id: t.transaction_id,
    occurred_at: t.occurred_at,
    amount: t.amount,
    direction: t.direction,
    balance: t.balance ?? null,
    import_id: t.import_id ?? null,
  }
}

/**
 * The kind of a report that states none: a payment from the payment service (its channel and
 * direction say it) or an event published before kinds existed. A kind the parser read wins.
 */
export function paymentKind(t: Pick<TransactionEvent, 'channel' | 'direction'>): Kind {
  if (t.channel === 'reversal') return 'reversal'
  return t.direction === 'in' ? 'customer_payment' : 'supplier_payment'
}

/**
 * `mobilemoney.transactions.raw` (parser) and `mobilemoney.transactions.categorized` (categorizer)
 * carry batches (1 to 1000 transactions per message), so a 100,000-row statement is 100 messages.
 * `mobilemoney.transactions.success` (payment) carries one TransactionEvent as its data.
 * A category override is a new categorized message with the same transaction_id.
 */
export const TransactionBatch = t.Object({ transactions: t.Array(TransactionEvent) })
export type TransactionBatch = typeof TransactionBatch.static

/** `mobilemoney.usage`: one metered quantity, idempotent by the envelope id. */
export const UsageEvent = t.Object({
  metric: t.Union([
    t.Literal('transactions'),
    t.Literal('statements'),
    t.Literal('payments'),
    t.Literal('api_calls'),
  ]),
  quantity: t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
})
export type UsageEvent = typeof UsageEvent.static

/** `mobilemoney.tenants.changed` (tenant service): a tenant was created, changed, suspended or deleted. */
export const TenantChangedEvent = t.Object({
  change: t.Union([
    t.Literal('created'),
    t.Literal('updated'),
    t.Literal('suspended'),
    t.Literal('deleted'),
  ]),
  name: t.String(),
  plan: t.String(),
  isolation: t.String(),
  status: t.String(),
  features: t.Record(t.String(), t.Boolean()),
  timezone: t.String(),
  /** Where the tenant was moved to per partitioned service; absent on older events. */
  instances: t.Optional(t.Record(t.String(), t.String())),
})
export type TenantChangedEvent = typeof TenantChangedEvent.static

/**
 * What the tenant service needs of a plan to apply it (DESIGN §3, §10): its isolation tier, its
 * feature defaults and its user limit (null: unlimited).
 */
export const PlanTerms = t.Object({
  tier: t.Union([t.Literal('free'), t.Literal('pro'), t.Literal('enterprise')]),
  features: t.Record(t.String(), t.Boolean()),
  users: t.Nullable(t.Integer({ minimum: 0 })),
})
export type PlanTerms = typeof PlanTerms.static

/**
 * `mobilemoney.subscriptions.changed` (billing): the tenant's plan or subscription status changed.
 * Billing owns the plan; the tenant service takes tier, isolation and feature defaults from here.
 * `plan_terms` are the terms of `plan` from billing's plan row (custom plans included);
 * `plan_revision` is raised by every plan change of the subscription, so a consumer applies a plan
 * only when its revision is above the last one it applied. Both are absent on events written
 * before they existed.
 */
export const SubscriptionChangedEvent = t.Object({
  plan: t.String(),
  previous_plan: t.Nullable(t.String()),
  status: t.String(),
  previous_status: t.Nullable(t.String()),
  reason: t.String(),
  current_period_start: t.String(),
  current_period_end: t.String(),
  plan_terms: t.Optional(t.Nullable(PlanTerms)),
  plan_revision: t.Optional(t.Integer({ minimum: 0 })),
})
export type SubscriptionChangedEvent = typeof SubscriptionChangedEvent.static

/** `mobilemoney.statements.processed` (parser): one statement import finished. */
export const StatementProcessedEvent = t.Object({
  import_id: t.String(),
  file_name: t.Nullable(t.String()),
  accepted: t.Integer(),
  duplicates: t.Integer(),
  rejected: t.Integer(),
  /** Of `duplicates`, rows matching a transaction another channel reported first. */
  matched: t.Optional(t.Integer()),
  /** Rows of the statement's table read (accepted + duplicates + rejected + skipped). */
  read: t.Optional(t.Integer()),
  skipped: t.Optional(t.Integer()),
  /**
   * Whether the kept rows reproduce the file's own totals and running balance (DESIGN §16), and
   * the owner's sentence where they do not. A statement that does not add up is never healthy.
   */
  verdict: t.Optional(
    t.Union([t.Literal('proven'), t.Literal('does_not_add_up'), t.Literal('unchecked')]),
  ),
  finding: t.Optional(t.Nullable(t.String())),
})
export type StatementProcessedEvent = typeof StatementProcessedEvent.static

/** `mobilemoney.balance.low` (cashflow): the balance or its forecast crossed the tenant threshold. */
export const BalanceLowEvent = t.Object({
  balance: t.Nullable(t.Number()),
  threshold: t.Number(),
  forecast_date: t.Nullable(t.String()),
  reason: t.String(),
})
export type BalanceLowEvent = typeof BalanceLowEvent.static

/** `mobilemoney.transactions.failed` (payment): a payment request ended without money moving. */
export const PaymentFailedEvent = t.Object({
  checkout_request_id: t.String(),
  status: t.String(),
  result_code: t.Nullable(t.Integer()),
  result_desc: t.Nullable(t.String()),
  /** What happened in plain words for the shop owner (services/payment/result-codes.ts). */
  result_message: t.Optional(t.String()),
  amount: t.Number(),
  phone_number: t.String(),
  account_reference: t.String(),
})
export type PaymentFailedEvent = typeof PaymentFailedEvent.static

/**
 * `mobilemoney.auth.revoked` (auth): a user was removed or logged out. Access tokens of `user_id`
 * issued at or before `before` (epoch seconds, ms fractions) are dead; with `session_id` only
 * those of that session (refresh-token family). Every process feeds its token verifier with it.
 */
export const AuthRevokedEvent = t.Object({
  /** For an API key's revocation its key id (no user has one), so older readers skip it. */
  user_id: t.String(),
  session_id: t.Union([t.String(), t.Null()]),
  before: t.Number(),
  reason: t.Union([
    t.Literal('removed'),
    t.Literal('logout'),
    t.Literal('refresh_reuse'),
    t.Literal('api_key_revoked'),
  ]),
  /** Set when an API key (`key_…`) is revoked: every process drops it from its cache at once. */
  api_key_id: t.Optional(t.String()),
})
export type AuthRevokedEvent = typeof AuthRevokedEvent.static

/**
 * `mobilemoney.balance.reported` (payment): the provider's Account Balance result for a shortcode
 * the tenant holds. `balance` is the available amount of the working (or utility) account, the
 * one money is paid out of; `accounts` every account the provider listed.
 */
export const BalanceReportedEvent = t.Object({
  shortcode: t.String(),
  balance: t.Number(),
  currency: t.String(),
  reported_at: t.String(),
  accounts: t.Array(
    t.Object({
      name: t.String(),
      currency: t.String(),
      available: t.Number(),
      current: t.Number(),
      reserved: t.Number(),
      uncleared: t.Number(),
    }),
  ),
})
export type BalanceReportedEvent = typeof BalanceReportedEvent.static

/**
 * `mobilemoney.entitlements.changed` (billing): what the tenant may do now, as billing wrote it to
 * its own `tenants/<id>/entitlements.json`; null once the tenant is gone. A part on its own data
 * dir keeps its copy from these (DESIGN §12); one sharing billing's data dir reads billing's file.
 */
export const EntitlementsChangedEvent = t.Object({ entitlements: t.Nullable(Entitlements) })
export type EntitlementsChangedEvent = typeof EntitlementsChangedEvent.static

/** The schema of each topic's `data`. */
export const topicSchemas = {
  [topics.transactionsSuccess]: TransactionEvent,
  [topics.transactionsFailed]: PaymentFailedEvent,
  [topics.transactionsRaw]: TransactionBatch,
  [topics.transactionsCategorized]: TransactionBatch,
  [topics.statementsProcessed]: StatementProcessedEvent,
  [topics.usage]: UsageEvent,
  [topics.subscriptionsChanged]: SubscriptionChangedEvent,
  [topics.balanceLow]: BalanceLowEvent,
  [topics.tenantsChanged]: TenantChangedEvent,
  [topics.authRevoked]: AuthRevokedEvent,
  [topics.balanceReported]: BalanceReportedEvent,
  [topics.entitlementsChanged]: EntitlementsChangedEvent,
} as const satisfies Record<Topic, unknown>

/** What `data` is on a topic. */
export type TopicData<T extends Topic> = (typeof topicSchemas)[T]['static']

/** An envelope of a topic, its data typed. */
export type TopicEvent<T extends Topic> = EventEnvelope<TopicData<T>>

/** A platform invoice number, as billing asks payers to quote it (DESIGN §10). */
const INVOICE_NUMBER = /^INV-\d{6,}$/i

/**
 * Whether a transactions.success payment settles the platform's own invoice (billing's business)
 * rather than being the tenant's income (categorizer, analytics, cashflow). The payment service
 * decides it when it publishes (`purpose: 'invoice'`, for payments billing started); an event
 * without the field (published before it existed, or by hand) counts as an invoice payment when
 * its account reference is an invoice number or id, as billing asks for it.
 */
export function isInvoicePayment(
  t: Pick<TransactionEvent, 'purpose' | 'account_reference' | 'source' | 'channel'>,
): boolean {
  if (t.purpose === 'invoice') return true
  // C2B events came after `purpose`, so they state it; their account reference is what the
  // customer typed and may look like anyone's invoice number.
  if (t.channel === 'c2b') return false
  const ref = t.account_reference?.trim() ?? ''
  return t.source === 'payment' && (INVOICE_NUMBER.test(ref) || ref.startsWith('inv_'))
}
