import { describe, expect, it } from 'bun:test'
import { StatementReader } from './statement-reader.ts'
import { newChunk } from './statement-row.ts'

/** The statement reader passes over a header repeated on a later page, however it is written. */
describe('a header repeated under the table', () => {
  it('is passed over in any case and spacing, and a receipt that looks like none is a row', () => {
    const header = (receipt: string) => [
      receipt,
      'Completion Time',
      'Details',
      'Transaction Status',
      'Paid In',
      'Withdrawn',
      'Balance',
    ]
    const row = (receipt: string, balance: string) => [
      receipt,
      '2024-03-01 10:00:00',
      'Funds received',
      'Completed',
      '10.00',
      '',
      balance,
    ]
    const reader = new StatementReader({ timeZone: 'Africa/Nairobi', now: Date.UTC(2025, 0, 1) })
    const out = newChunk()
    const records = [
      header('Receipt No.'),
      row('SC12AB34CD', '110.00'),
      header('RECEIPT'),
      row('TRANSACT01', '120.00'),
      header(' receipt no: '),
      row('SC12AB34CE', '130.00'),
      header('Receipt Number'),
    ]
    for (const [i, r] of records.entries()) reader.record(r, i + 1, out)
    reader.flush(out)
    expect(out.transactions.map((t) => t.receiptNumber)).toEqual([
      'SC12AB34CD',
      'TRANSACT01',
      'SC12AB34CE',
    ])
    expect(reader.finish().counts).toEqual({ read: 3, kept: 3, skipped: 0, rejected: 0 })
  })
})
