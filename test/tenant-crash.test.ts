import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations as analyticsMigrations } from '../schema/analytics/migrations.ts'
import { type Db, openDatabase } from '../services/kernel/db.ts'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

const ROWS = 300_000

function seed(db: Db, tenantId: string, n: number) {
  db.write(() => {
    const ins = db.sqlite.prepare(
      "INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, 'mobilemoney.e2e.history', ?, ?, '2026-11-01', '2026-11-01')",
    )
    for (let i = 0; i < n; i++) ins.run(`evt_${tenantId}_${i}`, tenantId, `{"amount":${i % 977}}`)
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
    p = await startTestPlatform({ only: 'gateway,auth,tenant,broker' })
  }, 60_000)
  afterAll(() => p.dispose())

  it('keeps every row in the old placement after a SIGKILL between copy and switch, and moves them on retry', async () => {
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
    expect(upgrade).toBeNull()
    expect(await p.exited()).toBe('SIGKILL')
    expect(p.logs()).toContain('fault point tenant.move.after_copy reached')
    await p.restart({ MMP_FAULT: '' })

    const placement = () =>
      JSON.parse(readFileSync(join(p.dataDir, 'tenants', 'acme', 'placement.json'), 'utf8'))
    // The old placement is authoritative: every row is still there, and readable.
    const inShared = countIn(sharedPath, 'acme')
    const isolation = placement().isolation as string
    expect(isolation).toBe('shared')
    expect(inShared).toBe(ROWS)
    expect(countIn(sharedPath, 'beta')).toBe(1000)
    const token = await p.login()
    const tenant = await api(p.gateway, token).get('/api/v1/tenants/acme')
    expect(tenant.body).toMatchObject({ plan: isolation === 'schema' ? 'pro' : 'free', isolation })

    const again = await api(p.gateway, token).put('/api/v1/tenants/acme/upgrade', { plan: 'pro' })
    expect(again.status).toBe(200)
    expect(countIn(ownPath, 'acme')).toBe(ROWS)
    expect(countIn(sharedPath, 'acme')).toBe(0)
  }, 120_000)
})
