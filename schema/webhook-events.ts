import type { TObject } from '@sinclair/typebox'
import { type Static, type TSchema, t } from 'elysia'
import {
  BalanceLowEvent,
  isInvoicePayment,
  StatementProcessedEvent,
  SubscriptionChangedEvent,
  type TopicData,
  topics,
} from './events.ts'
import type { TopicsOf } from './topic-registry.ts'
import type { WebhookEvent } from './vocabulary.ts'

/**
 * Every webhook event, declared once: what it means, its payload version, the broker topic it
 * comes from, how one broker event becomes its deliveries, and the JSON Schema of its `data`.
 * Derived from here: the webhook service's subscriptions and deliveries (services/webhook/consumers.ts),
 * the event catalogue (GET /api/v1/webhooks/event-types), the OpenAPI `webhooks`
 * (services/kernel/openapi-webhooks.ts) and the webhook events named on the AsyncAPI channels;
 * test/webhook-registry.test.ts holds them to it.
 *
 * Adding an event: its name in `WEBHOOK_EVENTS` (schema/vocabulary.ts, the dashboard's copy; the
 * compiler asks for both) and its entry here. `source` must be a topic schema/topic-registry.ts
 * lets `webhook` consume, and `from` must return what `data` describes (both compile errors).
 */

/**
 * The topics webhook events may come from: those the topic registry lets `webhook` consume, but
 * `tenants.changed`, which the webhook service consumes itself (a deleted tenant's endpoints go)
 * under the same inbox key, so an event from it would be taken as already handled.
 */
export type WebhookSource = Exclude<TopicsOf<'webhook'>, typeof topics.tenantsChanged>

/** One delivery's worth of an event: its data and, if it names a fact, what the fact is. */
interface Delivered<D> {
  data: D
  /**
   * What the message is about, from which its id is derived: the same fact sent again (an outbox
   * replayed, a restore) gets the same `webhook-id`. Without one, the broker event's id is used.
   */
  key?: string
}

export interface WebhookEventEntry<T extends WebhookSource, S extends TObject, D = Static<S>> {
  readonly description: string
  /** The payload version endpoints are pinned to (v1 is the only one). */
  readonly version: number
  readonly source: T
  /** JSON Schema of the envelope's `data`. */
  readonly data: S
  /** What one broker event of `source` becomes: a delivery's data each (none, one or many). */
  readonly from: (data: TopicData<T>) => ReadonlyArray<Delivered<D>>
}

/** An entry whatever its topic and schema (what the derived documents read). */
export interface AnyWebhookEventEntry {
  readonly description: string
  readonly version: number
  readonly source: WebhookSource
  readonly data: TObject
  readonly from: (data: never) => ReadonlyArray<Delivered<unknown>>
}

/** A field `from` sends that `data` does not describe, as a compile error naming it. */
type Undescribed<D, S> = [Exclude<keyof D, keyof S>] extends [never]
  ? unknown
  : { 'sent but not in data': Exclude<keyof D, keyof S> }

/**
 * An entry with `from` typed by its `source`, and what it returns held to `data`: a field missing,
 * of another type or not described is a compile error.
 */
export const defineWebhookEvent = <T extends WebhookSource, S extends TObject, D extends Static<S>>(
  e: WebhookEventEntry<T, S, D> & Undescribed<D, Static<S>>,
): WebhookEventEntry<T, S, D> => e

const nullable = <S extends TSchema>(s: S) => t.Union([s, t.Null()])
const Money = t.Number({ description: 'KES, decimal' })
const Time = t.String({ format: 'date-time' })
const closed = { additionalProperties: false } as const

export const webhookEventRegistry = {
  'payment.success': defineWebhookEvent({
    description:
      'Money arrived or left: an STK push or B2C succeeded, or a customer paid a till or paybill (C2B)',
    version: 1,
    source: topics.transactionsSuccess,
    data: t.Object(
      {
        transaction_id: t.String(),
        amount: Money,
        phone_number: nullable(t.String()),
        checkout_request_id: t.Optional(t.String()),
        receipt_number: nullable(t.String()),
        account_reference: t.Optional(t.String()),
        purpose: t.Optional(
          t.Literal('invoice', { description: "the platform's invoice was paid" }),
        ),
        channel: t.Optional(
          t.Union([t.Literal('stk'), t.Literal('b2c'), t.Literal('c2b'), t.Literal('reversal')]),
        ),
        counterparty_name: t.Optional(t.String({ description: 'C2B only: who paid' })),
        occurred_at: Time,
      },
      closed,
    ),
    from: (p) => [
      {
        // One payment succeeds once: its checkout request (STK), else its M-Pesa receipt.
        key: p.checkout_request_id ?? p.receipt_number ?? p.transaction_id,
        data: {
          transaction_id: p.transaction_id,
          amount: p.amount,
          phone_number: p.counterparty_phone ?? null,
          ...(p.checkout_request_id ? { checkout_request_id: p.checkout_request_id } : {}),
          receipt_number: p.receipt_number ?? null,
          ...(p.account_reference ? { account_reference: p.account_reference } : {}),
          // Receivers can tell the platform's invoice being paid from the tenant's own income.
          ...(isInvoicePayment(p) ? { purpose: 'invoice' as const } : {}),
          // How the money moved: 'stk', 'b2c', 'c2b' (a customer paid a till or paybill), 'reversal'.
          ...(p.channel ? { channel: p.channel } : {}),
          ...(p.channel === 'c2b' && p.counterparty_name
            ? { counterparty_name: p.counterparty_name }
            : {}),
          occurred_at: p.occurred_at,
        },
      },
    ],
  }),
  'payment.failed': defineWebhookEvent({
    description: 'An STK push ended without money: failed, cancelled by the customer or timed out',
    version: 1,
    source: topics.transactionsFailed,
    data: t.Object(
      {
        checkout_request_id: t.String(),
        status: t.String({ description: 'failed, cancelled or timeout' }),
        result_code: nullable(t.Integer()),
        result_desc: nullable(t.String()),
        result_message: t.Optional(
          t.String({ description: 'what happened, in plain words for the shop owner' }),
        ),
        amount: Money,
        phone_number: t.String(),
        account_reference: t.String(),
      },
      closed,
    ),
    from: (p) => [
      {
        key: p.checkout_request_id,
        data: {
          checkout_request_id: p.checkout_request_id,
          status: p.status,
          result_code: p.result_code ?? null,
          result_desc: p.result_desc ?? null,
          ...(p.result_message ? { result_message: p.result_message } : {}),
          amount: p.amount,
          phone_number: p.phone_number,
          account_reference: p.account_reference,
        },
      },
    ],
  }),
  'transaction.categorized': defineWebhookEvent({
    description: 'A transaction got its category (a rule, an override or the model)',
    version: 1,
    source: topics.transactionsCategorized,
    data: t.Object(
      {
        transaction_id: t.String(),
        occurred_at: Time,
        amount: Money,
        direction: t.Union([t.Literal('in'), t.Literal('out')]),
        description: t.String(),
        counterparty_name: nullable(t.String()),
        counterparty_phone: nullable(t.String()),
        receipt_number: nullable(t.String()),
        category: nullable(t.String()),
        category_confidence: nullable(t.Number()),
        category_source: nullable(t.String()),
        rule_id: nullable(t.String()),
      },
      closed,
    ),
    from: (batch) =>
      batch.transactions.map((p) => ({
        // Categorized again into another category (a new rule) is news; the same outcome is not.
        key: [p.transaction_id, p.category ?? '', p.category_source ?? '', p.rule_id ?? ''].join(
          '|',
        ),
        data: {
          transaction_id: p.transaction_id,
          occurred_at: p.occurred_at,
          amount: p.amount,
          direction: p.direction,
          description: p.description,
          counterparty_name: p.counterparty_name ?? null,
          counterparty_phone: p.counterparty_phone ?? null,
          receipt_number: p.receipt_number ?? null,
          category: p.category ?? null,
          category_confidence: p.category_confidence ?? null,
          category_source: p.category_source ?? null,
          rule_id: p.rule_id ?? null,
        },
      })),
  }),
  'subscription.renewed': defineWebhookEvent({
    description: "The tenant's subscription changed: plan, status or a new period",
    version: 1,
    source: topics.subscriptionsChanged,
    data: SubscriptionChangedEvent,
    from: (s) => [{ data: { ...s } }],
  }),
  'statement.processed': defineWebhookEvent({
    description: 'An uploaded M-Pesa statement was imported: what was accepted and skipped',
    version: 1,
    source: topics.statementsProcessed,
    data: StatementProcessedEvent,
    from: (s) => [{ data: { ...s } }],
  }),
  'low.balance.alert': defineWebhookEvent({
    description: "The tenant's balance fell below its low-balance threshold",
    version: 1,
    source: topics.balanceLow,
    data: BalanceLowEvent,
    from: (b) => [{ data: { ...b } }],
  }),
} as const satisfies { readonly [E in WebhookEvent]: AnyWebhookEventEntry }

/** A registry of webhook events (the real one, or a changed copy in a test). */
export type WebhookEventRegistry = Readonly<Record<string, AnyWebhookEventEntry>>

/** The events in declaration order (the order of the catalogue and the OpenAPI `webhooks`). */
export const webhookEventNames = Object.keys(webhookEventRegistry) as WebhookEvent[]

/** The topics the webhook service turns into events, each once. */
export const webhookSourceTopics: readonly WebhookSource[] = [
  ...new Set(Object.values(webhookEventRegistry).map((e) => e.source)),
]

/** The events a broker topic becomes (for the AsyncAPI channels). */
export const webhookEventsOf = (
  topic: string,
  reg: WebhookEventRegistry = webhookEventRegistry,
): string[] => Object.keys(reg).filter((name) => reg[name]?.source === topic)
