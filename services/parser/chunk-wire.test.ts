import { describe, expect, it } from 'bun:test'
import { packChunk, unpackChunk } from './chunk-wire.ts'
import type { ParsedTransaction } from './parsed.ts'
import type { StatementChunk } from './statement-row.ts'

const row = (over: Partial<ParsedTransaction>): ParsedTransaction => ({
  occurredAt: '2024-01-05T05:00:00.000Z',
  amount: 100_050,
  direction: 'in',
  counterpartyName: 'JOHN DOE',
  counterpartyPhone: '254712345678',
  description: 'Funds received from 0712345678 - JOHN DOE',
  receiptNumber: 'RCPA000001',
  balance: 100_050,
  ...over,
})

/** Through the wire as a thread receives it: cloned, then unpacked. */
const across = (chunk: StatementChunk) => unpackChunk(structuredClone(packChunk(chunk)))

describe('a statement chunk between threads', () => {
  it('arrives field for field: nulls, reversals, a negative zero balance, errors and skips', () => {
    const chunk: StatementChunk = {
      transactions: [
        row({}),
        row({ counterpartyName: null, counterpartyPhone: null, balance: null, direction: 'out' }),
        row({ description: 'Reversal of transaction RCPA000001', reversalOf: 'RCPA000001' }),
        row({ balance: -0, amount: 1, receiptNumber: null }),
        row({ description: 'Émile · 支払い', counterpartyName: 'Émile' }),
      ],
      rows: [2, 3, 5, 8, 13],
      ids: ['txn_1', 'txn_2', 'txn_3', 'txn_4', 'txn_5'],
      errors: [{ row: 4, field: 'Paid In', message: 'not a number' }],
      skipped: 2,
    }
    const got = across(chunk)
    expect(got).toEqual(chunk)
    expect(JSON.stringify(got.transactions)).toBe(JSON.stringify(chunk.transactions))
    expect(Object.is(got.transactions[3]!.balance, -0)).toBe(true)
    expect('reversalOf' in got.transactions[0]!).toBe(false)
  })

  it('sends what the joined text or the numbers cannot carry as it is: a separator, NaN', () => {
    const odds: Array<Partial<ParsedTransaction>> = [
      { description: 'a\u001fb' },
      { counterpartyName: '\u001f' },
      { receiptNumber: 'RCPA\u001f01', counterpartyPhone: null },
      { balance: Number.NaN },
    ]
    for (const odd of odds) {
      const chunk: StatementChunk = {
        transactions: [row({}), row(odd)],
        rows: [1, 2],
        ids: ['txn_1', 'txn_2'],
        errors: [],
        skipped: 0,
      }
      expect(packChunk(chunk).fields).toBeNull()
      expect(across(chunk)).toEqual(chunk)
    }
  })

  it('carries empty text as empty text and null as null, field by field', () => {
    const chunk: StatementChunk = {
      transactions: [
        row({ counterpartyName: '', counterpartyPhone: null, description: '' }),
        row({ counterpartyName: null, counterpartyPhone: '', receiptNumber: '' }),
        row({ reversalOf: '', kind: 'charge', leg: '' }),
        row({ kind: 'charge' }),
      ],
      rows: [1, 2, 3, 4],
      errors: [],
      skipped: 0,
    }
    expect(packChunk(chunk).fields).not.toBeNull()
    const got = across(chunk)
    expect(got).toEqual(chunk)
    expect(JSON.stringify(got.transactions)).toBe(JSON.stringify(chunk.transactions))
    expect('leg' in got.transactions[3]!).toBe(false)
  })

  it('carries a chunk without ids as one without', () => {
    const chunk: StatementChunk = { transactions: [row({})], rows: [1], errors: [], skipped: 0 }
    expect(across(chunk)).toEqual(chunk)
    expect('ids' in across(chunk)).toBe(false)
  })

  it('carries a chunk without transactions', () => {
    const chunk: StatementChunk = { transactions: [], rows: [], errors: [], skipped: 3 }
    expect(across(chunk)).toEqual(chunk)
  })
})
