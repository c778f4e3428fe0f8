import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations as analyticsMigrations } from '../schema/analytics/migrations.ts'
import { type Db, openDatabase } from '../services/kernel/db.ts'
import { outcome } from './support/jobs.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

const ROWS = 300_000

/** Events sent a day ago: recent enough that the relay's pruning (30 days) leaves them alone. */
function seed(db: Db, tenantId: string, n: number) {
  const at = new Date(Date.now() - 86_400_000).toISOString()
  db.write(() => {
    const ins = db.sqlite.prepare(
      "INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, 'mobilemoney.e2e.history', ?, ?, ?, ?)",
    )
    for (let i = 0; i < n; i++)
      ins.run(`evt_${tenantId}_${i}`, tenantId, `{"amount":${i % 977}}`, at, at)
  })
}

const countIn = (path: string, tenantId: string): number => {
  if (!existsSync(path)) return 0
  const db = openDatabase(path, { migrations: analyticsMigrations })
  try {
    return (
      db.sqlite
        .query<{ n: number }, [string]>('SELECT count(*) AS n FROM outbox WHERE tenant_id = ?')
        .get(tenantId)?.n ?? 0
    )
  } finally {
    db.close()
  }
}

describe('a crash in the middle of a plan change', () => {
  let p: TestPlatform
  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,billing,broker' })
  }, 60_000)
  afterAll(() => p.dispose())

  it('keeps every row in the old placement after a SIGKILL between copy and switch; the plan billing committed is applied on retry', async () => {
    const operator = await p.login()
    const created = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'acme',
      name: 'Acme',
      admin_email: 'admin@acme.test',
      admin_password: 'acme-admin-password',
    })
    expect(created.status).toBe(201)
    const sharedPath = join(p.dataDir, 'tenants', '_shared', 'analytics.db')
    const ownPath = join(p.dataDir, 'tenants', 'acme', 'analytics.db')
    const shared = openDatabase(sharedPath, { migrations: analyticsMigrations })
    seed(shared, 'acme', ROWS)
    seed(shared, 'beta', 1000)
    shared.close()

    // The process kills itself with every row copied and the placement not yet switched.
    expect(await p.stop()).toBe(0)
    await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: 'tenant.move.after_copy' })
    const upgrade = await api(p.gateway, await p.login())
      .put('/api/v1/tenants/acme/upgrade', { plan: 'pro' })
      .catch(() => null)
    // The request dies with the process, or, on a slow machine, the copy outlasts the request's
    // wait and the move goes on as a job (202) until the process kills itself.
    if (upgrade !== null) expect(upgrade.status).toBe(202)
    expect(await p.exited()).toBe('SIGKILL')
    expect(p.logs()).toContain('fault point tenant.move.after_copy reached')
    await p.restart({ MMP_FAULT: '' })

    // On start the interrupted move is settled first: the placement had not switched, so the
    // old one stands and the partial copies are purged.
    await eventually(
      () => /"switched":false[^\n]*"msg":"finished an interrupted tenant move"/.test(p.logs()),
      30_000,
      'the interrupted move settled on start',
    )
    const placement = () =>
      JSON.parse(readFileSync(join(p.dataDir, 'tenants', 'acme', 'placement.json'), 'utf8'))
    const token = await p.login()
    const gw = api(p.gateway, token)
    // Billing committed Pro before the kill and owns the plan; the tenant stays on the old
    // placement, every row there, until it applies billing's plan: from subscriptions.changed,
    // or from billing's answer when the door is asked again.
    expect((await gw.get('/api/v1/billing/subscriptions/acme')).body.plan).toBe('pro')
    const tenant = (await gw.get('/api/v1/tenants/acme')).body
    if (tenant.plan === 'free') {
      expect(tenant.isolation).toBe('shared')
      expect(placement().isolation).toBe('shared')
      expect(countIn(sharedPath, 'acme')).toBe(ROWS)
    }
    expect(countIn(sharedPath, 'beta')).toBe(1000)

    // A move of this size may take longer than the request waits: followed as a job then.
    const again = await outcome(
      p.gateway,
      token,
      await gw.put('/api/v1/tenants/acme/upgrade', { plan: 'pro' }),
    )
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ plan: 'pro', isolation: 'schema' })
    expect(placement()).toMatchObject({ plan: 'pro', isolation: 'schema' })
    expect(countIn(ownPath, 'acme')).toBe(ROWS)
    expect(countIn(sharedPath, 'acme')).toBe(0)
    expect(countIn(sharedPath, 'beta')).toBe(1000)
  }, 180_000)
})
