import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import type { TransactionEvent } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { applyTransactions } from './ingest.ts'
import { counterpartyKey, toStored } from './stored.ts'

const zone = timeZone('Africa/Nairobi')

const c2b = (id: string, receipt: string, name: string, phone: string): TransactionEvent => ({
  transaction_id: id,
  occurred_at: '2026-03-02T09:00:00.000Z',
  amount: 100,
  direction: 'in',
  counterparty_name: name,
  counterparty_phone: phone,
  description: 'Customer payment to till 600100',
  receipt_number: receipt,
  source: 'payment',
  channel: 'c2b',
})

/** Real C2B confirmations mask the payer's phone: customers are told apart by mask and name. */
describe('masked payers', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
  })
  afterAll(() => kit.cleanup())

  const keysOf = (tenant: string) =>
    kit.registry
      .tenant('analytics', tenant)
      .sqlite.query<{ key: string; tx_count: number; phone: string | null }, [string]>(
        'SELECT key, tx_count, phone FROM counterparties WHERE tenant_id = ? ORDER BY key',
      )
      .all(tenant)

  it('keeps two payers with the same mask and different names apart, and one name together', () => {
    expect(counterpartyKey('NICHOLAS DOE', '2547 ***** 126')).not.toBe(
      counterpartyKey('AMINA ROE', '2547 ***** 126'),
    )
    expect(counterpartyKey('Amina  Roe', '2547 ***** 126')).toBe(
      counterpartyKey('AMINA ROE', '2547 ***** 126'),
    )
    const db = kit.registry.tenant('analytics', 'tillshop')
    const rows = [
      c2b('txn_m1', 'TMASK00001', 'NICHOLAS DOE', '2547 ***** 126'),
      c2b('txn_m2', 'TMASK00002', 'AMINA ROE', '2547 ***** 126'),
      c2b('txn_m3', 'TMASK00003', 'AMINA ROE', '2547 ***** 126'),
    ].map((e) => toStored('tillshop', zone, e))
    applyTransactions(db, rows, new Date().toISOString())
    const keys = keysOf('tillshop')
    expect(keys.map((k) => k.tx_count).sort()).toEqual([1, 2])
  })

  it('merges a masked payer with the full number another channel reports for the same receipt', () => {
    const db = kit.registry.tenant('analytics', 'mergeshop')
    const now = new Date().toISOString()
    applyTransactions(
      db,
      [toStored('mergeshop', zone, c2b('txn_c1', 'TMERGE0001', 'JANE DOE', '2547 ***** 678'))],
      now,
    )
    // The same receipt from a statement, with the full number: the customer becomes that number.
    const statementRow = {
      ...c2b('txn_s1', 'TMERGE0001', 'JANE DOE', '254712345678'),
      source: 'statement' as const,
      channel: undefined,
    }
    applyTransactions(db, [toStored('mergeshop', zone, statementRow)], now, { onlyNew: true })
    // A later payment from the full number counts as the same customer.
    applyTransactions(
      db,
      [toStored('mergeshop', zone, c2b('txn_c2', 'TMERGE0002', 'JANE DOE', '254712345678'))],
      now,
    )
    const keys = keysOf('mergeshop').filter((k) => k.tx_count > 0)
    expect(keys).toEqual([expect.objectContaining({ key: 'tel:254712345678', tx_count: 2 })])
    // A full number whose digits do not fit the mask is another person: no merge.
    applyTransactions(
      db,
      [toStored('mergeshop', zone, c2b('txn_c3', 'TMERGE0003', 'JOHN ROE', '2547 ***** 999'))],
      now,
    )
    applyTransactions(
      db,
      [
        toStored('mergeshop', zone, {
          ...c2b('txn_s3', 'TMERGE0003', 'JOHN ROE', '254711111111'),
          source: 'statement',
        }),
      ],
      now,
      { onlyNew: true },
    )
    expect(keysOf('mergeshop').some((k) => k.key.startsWith('tel:2547*****999'))).toBe(true)
  })
})
