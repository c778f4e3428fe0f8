import { type TSchema, t } from 'elysia'
import {
  BalanceLowEvent,
  StatementProcessedEvent,
  SubscriptionChangedEvent,
} from '../../schema/events.ts'
import type { WebhookEvent } from './model.ts'

/**
 * The webhook event catalogue (Svix's event types): what each event means and the JSON Schema of
 * its `data`, as sources.ts builds it. Served at GET /api/v1/webhooks/event-types so a receiver can
 * generate types or validate what arrives.
 */

const nullable = (s: TSchema) => t.Union([s, t.Null()])
const Money = t.Number({ description: 'KES, decimal' })
const Time = t.String({ format: 'date-time' })

const PaymentSuccess = t.Object({
  transaction_id: t.String(),
  amount: Money,
  phone_number: nullable(t.String()),
  checkout_request_id: t.Optional(t.String()),
  receipt_number: nullable(t.String()),
  account_reference: t.Optional(t.String()),
  purpose: t.Optional(t.Literal('invoice', { description: "the platform's invoice was paid" })),
  channel: t.Optional(
    t.Union([t.Literal('stk'), t.Literal('b2c'), t.Literal('c2b'), t.Literal('reversal')]),
  ),
  counterparty_name: t.Optional(t.String({ description: 'C2B only: who paid' })),
  occurred_at: Time,
})

const PaymentFailed = t.Object({
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
})

const TransactionCategorized = t.Object({
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
})

export interface EventType {
  name: WebhookEvent
  description: string
  /** The payload version endpoints are pinned to (v1 is the only one). */
  version: number
  /** JSON Schema of the envelope's `data`. */
  schema: TSchema
}

export const eventTypes: readonly EventType[] = [
  {
    name: 'payment.success',
    description:
      'Money arrived or left: an STK push or B2C succeeded, or a customer paid a till or paybill (C2B)',
    version: 1,
    schema: PaymentSuccess,
  },
  {
    name: 'payment.failed',
    description: 'An STK push ended without money: failed, cancelled by the customer or timed out',
    version: 1,
    schema: PaymentFailed,
  },
  {
    name: 'transaction.categorized',
    description: 'A transaction got its category (a rule, an override or the model)',
    version: 1,
    schema: TransactionCategorized,
  },
  {
    name: 'subscription.renewed',
    description: "The tenant's subscription changed: plan, status or a new period",
    version: 1,
    schema: SubscriptionChangedEvent,
  },
  {
    name: 'statement.processed',
    description: 'An uploaded M-Pesa statement was imported: what was accepted and skipped',
    version: 1,
    schema: StatementProcessedEvent,
  },
  {
    name: 'low.balance.alert',
    description: "The tenant's balance fell below its low-balance threshold",
    version: 1,
    schema: BalanceLowEvent,
  },
]

/**
 * The catalogue as JSON: each `schema` a plain JSON Schema (TypeBox's symbols dropped).
 *
 * @example
 * listEventTypes().data.map((e) => e.name) // ['payment.success', ...]
 */
export function listEventTypes() {
  return {
    data: eventTypes.map((e) => ({ ...e, schema: JSON.parse(JSON.stringify(e.schema)) })),
  }
}

export const EventTypeList = t.Object({
  data: t.Array(
    t.Object({
      name: t.String(),
      description: t.String(),
      version: t.Integer(),
      schema: t.Record(t.String(), t.Unknown(), { description: 'JSON Schema of `data`' }),
    }),
  ),
})
