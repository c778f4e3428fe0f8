import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSimulator } from '../services/simulator/index.ts'
import { metricValue } from './support/metrics.ts'
import { type api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

const TENANT = 'metered'
const PARTS = 'gateway,auth,tenant,payment,parser,categorizer,analytics,billing,broker'

/**
 * Billing meters each transaction once when the platform dies at a fault point between doing a
 * thing and saying it did (DESIGN §15): an outbox batch published but not marked sent is
 * published again after the restart (the same event ids), and a push whose process died after
 * the provider took it is settled later by reconciliation, after its status had read `unknown`.
 * Each time billing's `transactions` usage and analytics' count move together, by one.
 */
describe('billing metering across a crash', () => {
  let p: TestPlatform
  let sim: ReturnType<typeof createSimulator>
  let admin: ReturnType<typeof api>
  const state = mkdtempSync(join(tmpdir(), 'mmp-metering-crash-'))

  beforeAll(async () => {
    // A provider that outlives the platform and keeps its record (Pull Transactions) of charges.
    sim = createSimulator({
      delayMs: 300,
      version: 'test',
      statePath: join(state, 'sim.db'),
    }).listen({ port: 0, hostname: '127.0.0.1' })
    p = await startTestPlatform({
      only: PARTS,
      env: {
        MMP_SIMULATOR_URL: `http://127.0.0.1:${sim.server!.port}`,
        MMP_RECONCILE_AFTER: '1',
      },
    })
    admin = await createTenantAdmin(p, { id: TENANT, plan: 'pro' })
  }, 60_000)

  afterAll(async () => {
    await p?.dispose()
    await sim?.stop()
    rmSync(state, { recursive: true, force: true })
  })

  const usage = async () => {
    const res = await admin.get(`/api/v1/billing/usage/${TENANT}`)
    return res.status === 200
      ? (res.body.metrics as Record<string, { used: number }>).transactions!.used
      : null
  }
  const counted = async () => {
    const res = await admin.get('/api/v1/analytics/summary')
    return res.status === 200 ? (res.body.total_transactions as number) : null
  }
  const usagePublished = () =>
    metricValue(p.gateway, 'mmp_events_published_total', { topic: 'mobilemoney.usage' })
  /** Billing's and analytics' counts once they agree on `n` transactions and stay there. */
  async function expectMetered(n: number) {
    let seen = ''
    await eventually(
      async () => {
        const used = await usage()
        const total = await counted()
        seen = `billing metered ${used}, analytics counted ${total}`
        return used === n && total === n
      },
      60_000,
      `billing and analytics at ${n} transactions`,
    ).catch((err) => {
      throw new Error(`${(err as Error).message}: ${seen}`)
    })
  }
  /** The count billing and analytics agree on before a test begins (another test's may still land). */
  async function agreed(): Promise<number> {
    let n = 0
    await eventually(
      async () => {
        n = (await counted()) ?? -1
        return n >= 0 && (await usage()) === n
      },
      60_000,
      'billing and analytics agreeing',
    )
    return n
  }
  /** Restarts with `fault` armed, does `act`, waits for the fault to kill it, restarts clean. */
  async function crashAt(fault: string, act: () => Promise<unknown>) {
    await p.kill()
    await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: fault })
    await act()
    await eventually(
      () => p.logs().includes(`fault point ${fault} reached`),
      30_000,
      `the platform to die at ${fault}`,
    )
    await p.kill()
    await p.restart({ MMP_FAULT: '' })
  }

  it('meters a statement row once when its events are published again after a crash', async () => {
    const before = await agreed()
    let answered = 0
    await crashAt('relay.after_publish', async () => {
      const res = await admin
        .post('/api/v1/parser/transactions', {
          transactions: [
            {
              occurred_at: '2026-01-05T10:00:00.000Z',
              amount: 10,
              direction: 'in',
              description: 'Crash row',
              receipt_number: 'KM00000001',
            },
          ],
        })
        .catch(() => null)
      answered = res?.status ?? 0
    })
    expect([200, 201]).toContain(answered)
    // The row's batch (its transactions and its usage) went out again after the restart, and
    // analytics' inbox dropped the repeat it had applied before the crash.
    // (The restart zeroed the counter: nothing else of this tenant was left to meter.)
    await eventually(
      async () => (await usagePublished()) >= 1,
      20_000,
      'the usage event published again',
    )
    await expectMetered(before + 1)
    // Settled: a late redelivery would have shown by now; the two still agree.
    await expectMetered(before + 1)
  }, 120_000)

  it('meters a push whose process died after the provider took it once, when it settles', async () => {
    const before = await agreed()
    const paymentsBefore = (await admin.get(`/api/v1/billing/usage/${TENANT}`)).body.metrics
      .payments.used as number
    await crashAt('payment.after_provider_accepted', () =>
      admin
        .post('/api/v1/payments/stkpush', {
          tenant_id: TENANT,
          phone_number: '254700005678',
          amount: 1,
          account_reference: 'CRASH1',
          transaction_desc: 'Crash',
        })
        .catch(() => null),
    )
    // The push is open, or `unknown` (what a client reads as final), until reconciliation finds
    // the provider's charge: billing and analytics count it only then, both once.
    await eventually(
      async () => {
        const list = await admin.get('/api/v1/payments?limit=10')
        return (
          list.status === 200 &&
          (list.body.data as Array<{ status: string }>).some((x) => x.status === 'success')
        )
      },
      90_000,
      'the push to settle',
    )
    await expectMetered(before + 1)
    // The push itself is metered once (billing's `payments` usage): not twice, and not left out
    // because its answer was lost and reconciliation, not the provider's answer, settled it.
    await eventually(
      async () =>
        (await admin.get(`/api/v1/billing/usage/${TENANT}`)).body.metrics.payments.used ===
        paymentsBefore + 1,
      30_000,
      'the push metered once',
    )
    await expectMetered(before + 1)
    const res = await admin.get(`/api/v1/billing/usage/${TENANT}`)
    expect(res.body.metrics.payments.used).toBe(paymentsBefore + 1)
  }, 150_000)
})
