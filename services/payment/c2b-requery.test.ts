import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eventually } from '../kernel/testing.ts'
import { nextAskAt } from './c2b-requery.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

describe('nextAskAt', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString()
  const due = (updated: number) =>
    (nextAskAt({ createdAt: at(0), updatedAt: at(updated) }, 1000) - Date.parse(at(0))) / 1000

  it('doubles the waits from the arrival and picks the first one after the last attempt', () => {
    expect(due(0)).toBe(1) // asked on arrival: again 1 s later
    expect(due(1)).toBe(3) // then 2 s after that
    expect(due(3)).toBe(7)
    expect(due(4)).toBe(7) // a result that came in between does not push it back
    expect(due(7)).toBe(15)
  })

  it('waits at most an hour between two attempts', () => {
    expect(due(10 * 3600) - 10 * 3600).toBeLessThanOrEqual(3600)
  })
})

/**
 * A C2B confirmation whose Transaction Status query fails (the simulator answers 503) stays
 * `received`, is asked about again only once its backoff wait is over, and after
 * `c2bVerifyForS` is marked `unverified` with the reason, counted as such, with the operator
 * alert `c2b_unverified` raised.
 */
describe('C2B verification retries', () => {
  let k: SimulatorKit
  const OPERATOR = { tenantId: 'platform', role: 'Admin' as const }

  beforeAll(async () => {
    k = await simulatorKit({ settings: { c2bVerifyForS: 3600 } })
  })
  afterAll(() => k?.cleanup())

  const payment = async (transId: string) =>
    (await k.call(`/api/v1/payments/c2b/payments/${transId}`)).body
  const failStatusQueries = (n: number) =>
    fetch(`${k.simUrl}/simulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transaction_status: n }),
    })
  const eatNow = () =>
    new Date(k.kit.ctx.clock.nowMs() + 3 * 3600_000)
      .toISOString()
      .replace(/[-:T]/g, '')
      .slice(0, 14)

  it('asks again with backoff, then gives up as unverified with the reason and an alert', async () => {
    const reg = await k.call('/api/v1/payments/c2b/register', {
      body: {
        shortcode: '600710',
        response_type: 'Completed',
        initiator_name: 'shopapi',
        security_credential: 'c3VwZXItc2VjcmV0',
      },
    })
    expect(reg.status).toBe(201)
    await failStatusQueries(1_000_000)
    const conf = await k.app.handle(
      new Request(reg.body.confirmation_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          TransactionType: 'Buy Goods',
          TransID: 'TRQY000001',
          TransTime: eatNow(),
          TransAmount: '75.00',
          BusinessShortCode: '600710',
          MSISDN: '2547 ***** 126',
          FirstName: 'JANE',
        }),
      }),
    )
    expect(conf.status).toBe(200)
    const first = await eventually(
      async () => {
        const p = await payment('TRQY000001')
        return /not verified yet/.test(p.status_reason ?? '') ? p : null
      },
      10_000,
      'the failed status query noted',
    )
    expect(first).toMatchObject({ status: 'received', counted: false })
    expect(first.status_reason).toMatch(/503|unavailable|did not accept/i)

    // Not due yet (the first wait is twice the pass interval, 60 s here): nothing is asked.
    expect(await k.payments.requeryC2b()).toEqual({ asked: 0, unverified: 0 })
    k.kit.ctx.clock.advance(61_000)
    expect(await k.payments.requeryC2b()).toEqual({ asked: 1, unverified: 0 })
    const again = await payment('TRQY000001')
    expect(again.status).toBe('received')
    expect(again.updated_at > first.updated_at).toBe(true)
    // Just asked: the next attempt waits longer.
    expect(await k.payments.requeryC2b()).toEqual({ asked: 0, unverified: 0 })

    k.kit.ctx.clock.advance(3600_000)
    expect(await k.payments.requeryC2b()).toEqual({ asked: 0, unverified: 1 })
    const given = await payment('TRQY000001')
    expect(given).toMatchObject({ status: 'unverified', counted: true })
    expect(given.status_reason).toMatch(/could not confirm it within 60 min/)
    const alerts = await k.call('/api/v1/payments/alerts', { who: OPERATOR })
    expect(alerts.body.alerts).toContainEqual(expect.objectContaining({ name: 'c2b_unverified' }))
    // Given up once: a later pass does nothing more.
    expect(await k.payments.requeryC2b()).toEqual({ asked: 0, unverified: 0 })
    await failStatusQueries(0)
  }, 30_000)
})
