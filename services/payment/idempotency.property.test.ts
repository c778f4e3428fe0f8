import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { type Daraja, ProviderError } from './daraja.ts'
import { type PaymentKit, paymentKit } from './test-kit.ts'

/**
 * Model test of the Idempotency-Key under races: fast-check's scheduler interleaves when each of
 * several same-key requests arrives, when the provider answers, and when a client told "in
 * progress" (409, Retry-After) tries again. Whatever the order: one provider request, and every
 * client ends with the same payment in the same state.
 */
type Outcome = 'accept' | 'timeout'

describe('idempotency under concurrent same-key requests', () => {
  let k: PaymentKit
  const providerCalls: string[] = []
  /** Set per run: when and how the provider answers. */
  let answer: (ref: string) => Promise<Outcome> = async () => 'accept'
  let seq = 0

  const provider: Daraja = {
    async stkPush(input) {
      const ref = new URL(input.callbackUrl).searchParams.get('ref')!
      providerCalls.push(ref)
      if ((await answer(ref)) === 'timeout')
        throw new ProviderError(0, null, 'provider unreachable: no answer within 10000 ms', true)
      seq++
      return {
        MerchantRequestID: `m-${seq}`,
        CheckoutRequestID: `ws_CO_prop_${seq}`,
        ResponseCode: '0',
        ResponseDescription: 'ok',
      }
    },
    stkQuery: async () => ({ state: 'processing' }),
    b2c: async () => {
      throw new Error('no B2C in this test')
    },
  }

  beforeAll(async () => {
    k = await paymentKit({ provider })
  })
  afterAll(() => k.cleanup())

  // Each run's key pushes to a phone of its own: a phone holds one open prompt at a time.
  const push = (key: string) =>
    k.call('/api/v1/payments/stkpush', {
      who: { tenantId: 'acme', role: 'Manager', userId: 'usr_ann' },
      headers: { 'idempotency-key': key },
      body: {
        phone_number: `2547123${String(Number(key.replace(/\D/g, '')) % 100000).padStart(5, '0')}`,
        amount: 10,
        account_reference: 'INV-1',
        transaction_desc: 'Order',
      },
    })

  it('makes one provider request and gives every client the same answer, in any interleaving', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 2, max: 6 }),
        fc.constantFrom<Outcome>('accept', 'timeout'),
        async (s, clients, outcome) => {
          const key = `k-prop-${++run}`
          const before = providerCalls.length
          // Retry-After says come back later: a retry waits until the provider answered and a
          // timer turn has passed (the answer is recorded by a grouped commit on a timer), so
          // clients told "in progress" cannot starve the answer they wait for.
          const { promise: answered, resolve: heard } = Promise.withResolvers<void>()
          answer = async (ref) => {
            const said = await s.schedule(Promise.resolve(outcome), `provider answers ${ref}`)
            heard()
            return said
          }
          /** A client that arrives when scheduled and retries while told "in progress". */
          const client = async (n: number) => {
            await s.schedule(Promise.resolve(), `client ${n} sends`)
            for (let attempt = 0; attempt < 100; attempt++) {
              const res = await push(key)
              if (res.status !== 409 || res.body.code !== 'IDEMPOTENCY_IN_PROGRESS') return res
              await answered
              await Bun.sleep(1)
              await s.schedule(Promise.resolve(), `client ${n} retries`)
            }
            throw new Error(`client ${n} was told "in progress" 100 times`)
          }
          const answers = await s.waitFor(
            Promise.all(Array.from({ length: clients }, (_, n) => client(n))),
          )
          expect(providerCalls.length - before).toBe(1)
          const first = answers[0]!
          expect(first.status).toBe(202)
          expect(first.body).toMatchObject({
            checkout_request_id: expect.any(String),
            status: outcome === 'accept' ? 'pending' : 'unknown',
          })
          for (const a of answers)
            expect({
              status: a.status,
              id: a.body.checkout_request_id,
              state: a.body.status,
            }).toEqual({
              status: 202,
              id: first.body.checkout_request_id,
              state: first.body.status,
            })
        },
      ),
      { numRuns: 40 },
    )
  })
})
