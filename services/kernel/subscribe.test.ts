import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../../schema/auth/migrations.ts'
import {
  type EventEnvelope,
  isInvoicePayment,
  type TopicEvent,
  topics,
} from '../../schema/events.ts'
import { createMemoryBus } from './bus.ts'
import { openDatabase } from './db.ts'
import { handleOnce } from './events.ts'
import type { Logger } from './log.ts'
import { eventsMalformed, explainMalformed, subscribe } from './subscribe.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A logger that keeps its warnings, so a test can count the lines. */
function recordingLog() {
  const warnings: Array<[string, Record<string, unknown>]> = []
  const log = {
    warn: (msg: string, fields: Record<string, unknown>) => warnings.push([msg, fields]),
  }
  return { warnings, log: log as unknown as Logger }
}

const usage = (id: string, data: Record<string, unknown>, over: Partial<EventEnvelope> = {}) => ({
  id,
  type: topics.usage,
  version: 1,
  tenant_id: 'acme',
  occurred_at: '2026-01-01T00:00:00Z',
  data,
  ...over,
})

async function malformedCount(consumer: string): Promise<number> {
  const { values } = await eventsMalformed.get()
  return values.find((v) => v.labels.topic === topics.usage && v.labels.consumer === consumer)
    ?.value as number
}

describe('subscribe', () => {
  it('delivers an event that fits its topic schema, typed by topic', async () => {
    const bus = createMemoryBus()
    const { log, warnings } = recordingLog()
    const got: Array<TopicEvent<typeof topics.usage>> = []
    await subscribe({ bus, log }, 'test-valid', topics.usage, (event) => {
      // Typed: metric is the union of usage metrics, quantity a number.
      const metric: 'transactions' | 'statements' | 'payments' | 'api_calls' = event.data.metric
      expect(metric).toBe('payments')
      got.push(event)
    })
    await bus.publish(topics.usage, usage('evt_ok', { metric: 'payments', quantity: 2 }))
    expect(got).toHaveLength(1)
    expect(got[0]).toMatchObject({ id: 'evt_ok', data: { metric: 'payments', quantity: 2 } })
    expect(warnings).toEqual([])
  })

  it('drops a malformed event with one log line and the malformed-event metric', async () => {
    const bus = createMemoryBus()
    const { log, warnings } = recordingLog()
    const got: unknown[] = []
    await subscribe({ bus, log }, 'test-malformed', topics.usage, (event) => {
      got.push(event)
    })
    const before = (await malformedCount('test-malformed')) ?? 0
    const bad = [
      usage('evt_bad_metric', { metric: 'bananas', quantity: 1 }),
      usage('evt_negative', { metric: 'payments', quantity: -1 }),
      usage('evt_missing', { metric: 'payments' }),
      usage('evt_tenant', { metric: 'payments', quantity: 1 }, { tenant_id: '../etc' }),
      usage('evt_type', { metric: 'payments', quantity: 1 }, { type: topics.balanceLow }),
      usage('', { metric: 'payments', quantity: 1 }),
    ]
    for (const e of bad) await bus.publish(topics.usage, e as EventEnvelope)
    expect(got).toEqual([])
    expect(await malformedCount('test-malformed')).toBe(before + bad.length)
    expect(warnings).toHaveLength(bad.length)
    expect(warnings[0]).toEqual([
      'dropped a malformed event',
      {
        topic: topics.usage,
        consumer: 'test-malformed',
        event_id: 'evt_bad_metric',
        error: expect.stringContaining('/data/metric'),
      },
    ])
    expect(warnings[3]![1].error).toContain('/tenant_id')
  })

  it('leaves repeated ids to the inbox: a redelivered valid event is applied once', async () => {
    const d = mkdtempSync(join(tmpdir(), 'mmp-subscribe-'))
    dirs.push(d)
    const db = openDatabase(join(d, 'x.db'), { migrations })
    const bus = createMemoryBus()
    const { log } = recordingLog()
    let applied = 0
    await subscribe({ bus, log }, 'test-inbox', topics.usage, (event) => {
      handleOnce(db, 'test-inbox', event.id, () => {
        applied += event.data.quantity
      })
    })
    const e = usage('evt_once', { metric: 'payments', quantity: 3 })
    await bus.publish(topics.usage, e)
    await bus.publish(topics.usage, e)
    expect(applied).toBe(3)
    db.close()
  })

  it('lets a handler error reach the bus, which retries it', async () => {
    const bus = createMemoryBus()
    const { log } = recordingLog()
    await subscribe({ bus, log }, 'test-throw', topics.usage, () => {
      throw new Error('disk full')
    })
    await expect(
      bus.publish(topics.usage, usage('evt_throw', { metric: 'payments', quantity: 1 })),
    ).rejects.toThrow('disk full')
  })
})

describe('explainMalformed', () => {
  it('checks every topic against its own schema', () => {
    const batch = (transactions: unknown[]) => ({
      ...usage('evt_b', {}),
      type: topics.transactionsCategorized,
      data: { transactions },
    })
    const txn = {
      transaction_id: 'txn_1',
      occurred_at: '2026-01-01T00:00:00Z',
      amount: 10,
      direction: 'in',
      description: 'Sale',
      source: 'sms',
    }
    expect(explainMalformed(topics.transactionsCategorized, batch([txn]))).toBeNull()
    expect(
      explainMalformed(topics.transactionsCategorized, batch([{ ...txn, amount: '10' }])),
    ).toBe('/data/transactions/0/amount: Expected number')
    expect(explainMalformed(topics.transactionsCategorized, null)).not.toBeNull()
  })
})

describe('isInvoicePayment', () => {
  it('follows the purpose the payment service states', () => {
    expect(isInvoicePayment({ source: 'payment', purpose: 'invoice' })).toBe(true)
    expect(isInvoicePayment({ source: 'payment', account_reference: 'ORDER-1' })).toBe(false)
  })

  it('reads an invoice number as the reference of an event without a purpose', () => {
    expect(isInvoicePayment({ source: 'payment', account_reference: ' inv-000001 ' })).toBe(true)
    expect(isInvoicePayment({ source: 'payment', account_reference: 'inv_abc' })).toBe(true)
    expect(isInvoicePayment({ source: 'payment', account_reference: 'INV-42' })).toBe(false)
    expect(isInvoicePayment({ source: 'statement', account_reference: 'INV-000001' })).toBe(false)
  })
})
