import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/**
 * `transaction_desc` is optional, as Daraja's TransactionDesc is ("All fields apart from
 * TransactionDesc are all mandatory"): without one the push says 'Payment'; one given is still
 * held to Daraja's 13 characters.
 */
describe('an STK push without transaction_desc', () => {
  let k: SimulatorKit

  beforeAll(async () => {
    k = await simulatorKit()
  })
  afterAll(() => k?.cleanup())

  const push = (body: Record<string, unknown>) =>
    k.call('/api/v1/payments/stkpush', {
      body: { amount: 10, account_reference: 'INV-7', ...body },
    })

  it("is sent with 'Payment' and shown so", async () => {
    const r = await push({ phone_number: '254712300701' })
    expect(r.status).toBe(202)
    const seen = await k.seenBySimulator(r.body.checkout_request_id)
    expect(seen.TransactionDesc).toBe('Payment')
    const db = k.kit.ctx.registry.tenant('payment', 'shop').sqlite
    expect(
      db
        .query<{ transaction_desc: string }, [string]>(
          'SELECT transaction_desc FROM payments WHERE checkout_request_id = ?',
        )
        .get(r.body.checkout_request_id),
    ).toEqual({ transaction_desc: 'Payment' })
  })

  it('keeps a given one, and still refuses one over 13 characters', async () => {
    const r = await push({ phone_number: '254712300702', transaction_desc: 'Sugar 2kg' })
    expect(r.status).toBe(202)
    const seen = await k.seenBySimulator(r.body.checkout_request_id)
    expect(seen.TransactionDesc).toBe('Sugar 2kg')
    const long = await push({ phone_number: '254712300703', transaction_desc: 'fourteen chars' })
    expect(long.status).toBe(422)
    expect(long.body.errors.map((e: { field: string }) => e.field)).toEqual(['transaction_desc'])
  })
})
