import { describe, expect, it } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { topics } from '../schema/events.ts'
import { webhookSourceTopics } from '../schema/webhook-events.ts'
import { webhookPayloadSchema } from '../services/kernel/openapi-webhooks.ts'
import { mapSourceEvent } from '../services/webhook/consumers.ts'

const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
const txn = {
  transaction_id: 'txn_1',
  occurred_at: '2026-01-15T09:30:00.000Z',
  amount: 150,
  direction: 'in' as const,
  description: 'sale',
  source: 'payment' as const,
  counterparty_phone: '2547 ***** 678',
  receipt_number: 'SGL1234567',
  checkout_request_id: 'ws_CO_1',
  account_reference: 'ORDER-1',
  channel: 'c2b' as const,
  counterparty_name: 'Wanjiku',
  category: 'sales',
  category_confidence: 0.9,
  category_source: 'rule',
  rule_id: null,
}
const samples: Record<string, unknown> = {
  [topics.transactionsSuccess]: txn,
  [topics.transactionsFailed]: {
    checkout_request_id: 'ws_CO_2',
    status: 'cancelled',
    result_code: 1032,
    result_desc: 'Request cancelled by user',
    amount: 150,
    phone_number: '254712345678',
    account_reference: 'ORDER-2',
  },
  [topics.transactionsCategorized]: { transactions: [txn] },
  [topics.statementsProcessed]: {
    import_id: 'imp_1',
    file_name: null,
    accepted: 10,
    duplicates: 0,
    rejected: 1,
  },
  [topics.subscriptionsChanged]: {
    plan: 'pro',
    previous_plan: 'free',
    status: 'active',
    previous_status: 'trialing',
    reason: 'renewed',
    current_period_start: '2026-01-01T00:00:00.000Z',
    current_period_end: '2026-02-01T00:00:00.000Z',
  },
  [topics.balanceLow]: { balance: 900, threshold: 1000, forecast_date: null, reason: 'balance' },
}

describe('the documented webhook payloads', () => {
  it('match what the webhook service sends for each source event', () => {
    for (const topic of webhookSourceTopics) {
      for (const m of mapSourceEvent(topic, { id: 'evt_1', data: samples[topic] })) {
        const body = {
          id: 'msg_1',
          event: m.event,
          version: 1,
          timestamp: txn.occurred_at,
          data: m.data,
        }
        const validate = ajv.compile(webhookPayloadSchema(m.event))
        expect(validate(body) ? [] : validate.errors, `${topic} → ${m.event}`).toEqual([])
      }
    }
  })
})
