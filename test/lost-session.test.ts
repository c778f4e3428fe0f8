import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type api, eventually } from './support/platform.ts'
import { type SplitPlatform, startSplitPlatform } from './support/split.ts'
import { createTenantAdmin } from './support/tenants.ts'

/**
 * Issue 22, failure: a consumer away while its broker lost every session (mosquitto restarted
 * without persistence) comes back to a broker that holds nothing for it. What was published
 * for it meanwhile is still in its producers' outboxes; the consumer asks for it again.
 */
describe('a consumer whose broker session was lost while it was away', () => {
  let split: SplitPlatform
  let admin: ReturnType<typeof api>
  const TENANT = 'away'
  let receipt = 0
  const postRows = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = receipt++
      const res = await admin.post('/api/v1/parser/transactions', {
        transactions: [
          {
            occurred_at: new Date(Date.UTC(2026, 0, 5, 10, 0, r)).toISOString(),
            amount: 10,
            direction: 'in',
            description: `Row ${r}`,
            receipt_number: `LS${String(r).padStart(8, '0')}`,
          },
        ],
      })
      expect(res.status).toBe(200)
    }
  }
  const metered = async () =>
    (await admin.get(`/api/v1/billing/usage/${TENANT}`)).body?.metrics?.transactions?.used
  const inAnalytics = async () =>
    (await admin.get('/api/v1/analytics/summary')).body?.total_transactions

  beforeAll(async () => {
    // No persistence: a restart of the broker forgets every session and what it queued.
    split = await startSplitPlatform({ persistence: false })
    admin = await createTenantAdmin(split.front, { id: TENANT, plan: 'pro' })
  }, 60_000)
  afterAll(() => split.dispose())

  it('gets what was published meanwhile from the producers, once', async () => {
    await postRows(5)
    await eventually(async () => (await metered()) === 5, 20_000, 'billing metering 5 rows')

    // Billing (in the back process) goes away; rows keep coming in through the front.
    expect(await split.back.stop()).toBe(0)
    await postRows(7)
    await eventually(async () => (await inAnalytics()) === 12, 20_000, '12 rows in analytics')
    // The broker forgets billing's session, and the front's relays republish their recent
    // events to nobody: billing is not there to be subscribed.
    await split.broker.restart()
    await postRows(1)
    await eventually(async () => (await inAnalytics()) === 13, 20_000, 'the front reconnected')
    const count = (text: string) => split.front.logs().split(text).length - 1
    await eventually(
      () =>
        count('republishing recent events after the broker') > 0 &&
        count('recent events republished after the broker') ===
          count('republishing recent events after the broker'),
      20_000,
      "the front's relays republishing their recent events",
    )

    await split.back.restart()
    await eventually(async () => (await metered()) === 13, 30_000, 'billing metering 13 rows')
    expect(split.back.logs()).toContain('the broker lost this session')
    // The replay reached back past the first rows too (its margin): billing's inbox dropped them.
    await postRows(1)
    await eventually(async () => (await metered()) === 14, 20_000, 'billing metering 14 rows')
    expect(await metered()).toBe(14)
  }, 150_000)
})
