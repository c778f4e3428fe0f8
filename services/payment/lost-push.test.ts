import { describe, expect, it } from 'bun:test'
import type { PulledTransaction } from './daraja-pull.ts'
import { parseTrxDate } from './daraja-pull.ts'
import { matchOf, samePhone } from './lost-push.ts'
import type { PaymentRow } from './rows.ts'

const push = {
  id: 'pay_1',
  tenantId: 'acme',
  phoneNumber: '254712345126',
  amountCents: 15000,
  accountReference: 'ORDER-7',
  createdAt: '2026-11-27T10:00:00.000Z',
} as PaymentRow

const txn = (over: Partial<PulledTransaction>): PulledTransaction => ({
  receipt: 'TST0000001',
  at: new Date('2026-11-27T10:00:20.000Z'),
  msisdn: '254712345126',
  billReference: 'ORDER-7',
  amount: 150,
  ...over,
})

describe('finding a lost push in the provider record', () => {
  it('matches by reference, phone, amount and time', () => {
    const none = () => false
    expect(matchOf(push, [txn({})], none)?.receipt).toBe('TST0000001')
    expect(matchOf(push, [txn({ billReference: ' order-7 ' })], none)).not.toBeNull()
    expect(matchOf(push, [txn({ msisdn: '2547 ***** 126' })], none)).not.toBeNull()
    expect(matchOf(push, [txn({ billReference: 'ORDER-8' })], none)).toBeNull()
    expect(matchOf(push, [txn({ amount: 151 })], none)).toBeNull()
    expect(matchOf(push, [txn({ msisdn: '254712345999' })], none)).toBeNull()
    // Before the push, or after its prompt could still be answered.
    expect(matchOf(push, [txn({ at: new Date('2026-11-27T09:58:00.000Z') })], none)).toBeNull()
    expect(matchOf(push, [txn({ at: new Date('2026-11-27T10:02:00.000Z') })], none)).toBeNull()
  })

  it('never takes a receipt another payment holds, nor one after M-Pesa took the next push', () => {
    expect(matchOf(push, [txn({})], (r) => r === 'TST0000001')).toBeNull()
    const next = Date.parse('2026-11-27T10:00:10.000Z')
    expect(matchOf(push, [txn({})], () => false, next)).toBeNull()
    const both = [txn({ receipt: 'LATER00002', at: new Date('2026-11-27T10:00:40.000Z') }), txn({})]
    expect(matchOf(push, both, () => false)?.receipt).toBe('TST0000001')
  })

  it('reads phones and times as the provider shows them', () => {
    expect(samePhone('722000000', '254722000000')).toBe(true)
    expect(samePhone('', '254722000000')).toBe(true)
    expect(samePhone('2547 ***** 000', '254722000000')).toBe(true)
    expect(samePhone('2547 ***** 001', '254722000000')).toBe(false)
    expect(parseTrxDate('2020-08-05T10:13:00Z')?.toISOString()).toBe('2020-08-05T10:13:00.000Z')
    expect(parseTrxDate('2020-08-05 13:13:00')?.toISOString()).toBe('2020-08-05T10:13:00.000Z')
    expect(parseTrxDate('')).toBeNull()
  })
})
