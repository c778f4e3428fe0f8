import { describe, expect, it } from 'bun:test'
import { AppError } from '../kernel/errors.ts'
import { decideKey, requestHash } from './idempotency.ts'
import { statusOfResult } from './rows.ts'

const row = (over: Partial<Parameters<typeof decideKey>[0] & object> = {}) => ({
  requestHash: 'h',
  ref: 'pay_1',
  responseStatus: null,
  responseBody: null,
  ...over,
})

describe('idempotency decisions', () => {
  it('starts a payment for a key never seen', () => {
    expect(decideKey(null, 'h', false)).toEqual({ action: 'new' })
  })

  it('refuses the same key with another body (409 IDEMPOTENCY_KEY_REUSED)', () => {
    const err = (() => {
      try {
        decideKey(row(), 'other', false)
      } catch (e) {
        return e
      }
    })()
    expect(err).toBeInstanceOf(AppError)
    expect(err).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 409 })
  })

  it('replays the stored answer once the provider accepted', () => {
    const body = { checkout_request_id: 'ws_CO_1', merchant_request_id: 'm', status: 'pending' }
    expect(
      decideKey(row({ responseStatus: 202, responseBody: JSON.stringify(body) }), 'h', false),
    ).toEqual({ action: 'replay', body })
  })

  it('says in progress while the first request is still calling the provider here', () => {
    expect(decideKey(row(), 'h', true)).toEqual({ action: 'in_progress' })
  })

  it("answers with the payment's current state when nobody here is calling the provider", () => {
    expect(decideKey(row(), 'h', false)).toEqual({ action: 'current', ref: 'pay_1' })
  })

  it('hashes bodies independently of key order', () => {
    expect(requestHash({ a: 1, b: { c: 2, d: 3 } })).toBe(requestHash({ b: { d: 3, c: 2 }, a: 1 }))
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }))
  })
})

describe('result codes', () => {
  it('ends 1031 and 1032 cancelled, 1037 timeout, 0 success, others failed', () => {
    expect([0, 1031, 1032, 1037, 1, 2001].map(statusOfResult)).toEqual([
      'success',
      'cancelled',
      'cancelled',
      'timeout',
      'failed',
      'failed',
    ])
  })
})
