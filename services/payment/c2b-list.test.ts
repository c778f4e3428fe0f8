import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/** The confirmations a tenant received: newest first, filtered by status, at most `limit`. */
describe('C2B payments list', () => {
  let k: SimulatorKit
  beforeAll(async () => {
    k = await simulatorKit()
  })
  afterAll(() => k?.cleanup())

  const eatNow = () =>
    new Date(k.kit.ctx.clock.nowMs() + 3 * 3600_000)
      .toISOString()
      .replace(/[-:T]/g, '')
      .slice(0, 14)

  it('lists newest first, by status and up to the limit', async () => {
    const reg = await k.call('/api/v1/payments/c2b/register', {
      body: { shortcode: '600530', response_type: 'Completed' },
    })
    expect(reg.status).toBe(201)
    for (const n of [1, 2, 3]) {
      k.kit.ctx.clock.advance(1000)
      const res = await k.app.handle(
        new Request(reg.body.confirmation_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            TransactionType: 'Buy Goods',
            TransID: `TRLS00000${n}`,
            TransTime: eatNow(),
            TransAmount: `${n}0.00`,
            BusinessShortCode: '600530',
            MSISDN: '2547 ***** 126',
          }),
        }),
      )
      expect(res.status).toBe(200)
    }
    const all = (await k.call('/api/v1/payments/c2b/payments')).body.data
    expect(all.map((r: { trans_id: string }) => r.trans_id)).toEqual([
      'TRLS000003',
      'TRLS000002',
      'TRLS000001',
    ])
    expect(all[0]).toMatchObject({ amount: 30, shortcode: '600530' })
    const two = (await k.call('/api/v1/payments/c2b/payments?limit=2')).body.data
    expect(two).toHaveLength(2)
    const status = all[0].status as string
    const same = (await k.call(`/api/v1/payments/c2b/payments?status=${status}`)).body.data
    expect(same.length).toBe(all.filter((r: { status: string }) => r.status === status).length)
    const other = status === 'rejected' ? 'unrouted' : 'rejected'
    expect((await k.call(`/api/v1/payments/c2b/payments?status=${other}`)).body.data).toEqual([])
  }, 30_000)
})
