import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { generateKeyPair, SignJWT } from 'jose'
import mqtt from 'mqtt'
import { migrations as analyticsMigrations } from '../schema/analytics/migrations.ts'
import { type Db, openDatabase } from '../services/kernel/db.ts'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'

const ROWS = 10_000
const root = join(import.meta.dir, '..')

/** Rows a Free tenant has in a shared service database (outbox rows carry a tenant_id). */
function seedShared(db: Db, tenantId: string, n: number, unsent = 0) {
  db.write(() => {
    const ins = db.sqlite.prepare(
      'INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    const at = new Date().toISOString()
    for (let i = 0; i < n; i++) {
      const id = `evt_${tenantId}_${i}`
      const sent = i >= n - unsent ? null : at
      const topic = sent ? 'mobilemoney.e2e.history' : 'mobilemoney.e2e.moved'
      const envelope = {
        id,
        type: topic,
        version: 1,
        tenant_id: tenantId,
        occurred_at: at,
        data: { amount: (i % 1000) * 100 + 7 },
      }
      ins.run(id, topic, tenantId, JSON.stringify(envelope), at, sent)
    }
  })
}

const statsOf = (db: Db, tenantId: string) =>
  db.sqlite
    .query<{ n: number; s: number | null }, [string]>(
      "SELECT count(*) AS n, sum(json_extract(payload, '$.data.amount')) AS s FROM outbox WHERE tenant_id = ?",
    )
    .get(tenantId)!

function allPaths(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? [join(dir, e.name), ...allPaths(join(dir, e.name))] : [join(dir, e.name)],
  )
}

describe('tenants end to end', () => {
  let p: TestPlatform
  let operator: string
  let acmeAdmin: string
  let betaAdmin: string
  const outsideBefore = new Set<string>()

  beforeAll(async () => {
    p = await startTestPlatform()
    for (const e of readdirSync(dirname(p.dataDir))) outsideBefore.add(e)
    operator = await p.login()
    for (const [id, name] of [
      ['acme', 'Acme Ltd'],
      ['beta', 'Beta Ltd'],
    ]) {
      const res = await api(p.gateway, operator).post('/api/v1/tenants', {
        id,
        name,
        admin_email: `admin@${id}.test`,
        admin_password: `${id}-admin-password`,
      })
      expect(res.status).toBe(201)
    }
    acmeAdmin = await p.login('admin@acme.test', 'acme-admin-password')
    betaAdmin = await p.login('admin@beta.test', 'beta-admin-password')
  }, 60_000)
  afterAll(() => p.dispose())

  it('creates a tenant with the documented shape, a slug id and an invitation for its Admin', async () => {
    const res = await api(p.gateway, operator).post('/api/v1/tenants', {
      name: 'Gamma Traders',
      admin_email: 'admin@gamma.test',
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      id: 'gamma-traders',
      name: 'Gamma Traders',
      plan: 'free',
      isolation: 'shared',
      status: 'active',
      timezone: 'Africa/Nairobi',
      features: { advanced_analytics: false, bulk_upload: true, api_access: true },
    })
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(0)
    const accepted = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token: res.body.invite_token,
      password: 'gamma-admin-password',
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.user).toMatchObject({ tenant_id: 'gamma-traders', role: 'Admin' })
    const dup = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'gamma-traders',
      name: 'Again',
      admin_email: 'other@gamma.test',
    })
    expect(dup.status).toBe(409)
    // Other tests make and erase tenants of their own: these three are there whatever ran before.
    const listed = await api(p.gateway, operator).get('/api/v1/tenants')
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual(
      expect.arrayContaining(['acme', 'beta', 'gamma-traders']),
    )
  })

  it('invites a user whose single-use invitation is accepted through auth', async () => {
    const inv = await api(p.gateway, acmeAdmin).post('/api/v1/tenants/acme/users', {
      email: 'ann@acme.test',
      role: 'Analyst',
    })
    expect(inv.status).toBe(201)
    expect(inv.body).toMatchObject({ email: 'ann@acme.test', role: 'Analyst' })
    expect(Date.parse(inv.body.expires_at)).toBeGreaterThan(Date.now())
    const ok = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token: inv.body.invite_token,
      password: 'ann-password-1',
    })
    expect(ok.status).toBe(200)
    const again = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token: inv.body.invite_token,
      password: 'ann-password-2',
    })
    expect(again.status).toBe(401)
    const ann = await p.login('ann@acme.test', 'ann-password-1')
    expect((await api(p.gateway, ann).get('/api/v1/tenants/acme')).status).toBe(200)
    expect((await api(p.gateway, ann).get('/api/v1/tenants/acme/users')).status).toBe(403)
    const users = await api(p.gateway, acmeAdmin).get('/api/v1/tenants/acme/users')
    expect(users.body.data.map((u: { email: string }) => u.email).sort()).toEqual([
      'admin@acme.test',
      'ann@acme.test',
    ])
    const removed = await api(p.gateway, acmeAdmin).delete(
      `/api/v1/tenants/acme/users/${inv.body.id}`,
    )
    expect(removed.status).toBe(204)
    const login = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'ann@acme.test',
      password: 'ann-password-1',
    })
    expect(login.status).toBe(401)
  })

  it("never shows one tenant's tenant record, users, features or usage to another", async () => {
    const betaUsers = await api(p.gateway, betaAdmin).get('/api/v1/tenants/beta/users')
    const betaUserId = betaUsers.body.data[0].id as string
    const a = api(p.gateway, acmeAdmin)
    const probes = [
      a.get('/api/v1/tenants/beta'),
      a.get('/api/v1/tenants/beta/users'),
      a.get('/api/v1/tenants/beta/features'),
      a.get('/api/v1/tenants/beta/usage'),
      a.patch('/api/v1/tenants/beta', { name: 'pwned' }),
      a.put('/api/v1/tenants/beta/features', { bulk_upload: false }),
      a.put('/api/v1/tenants/beta/upgrade', { plan: 'free' }),
      a.post('/api/v1/tenants/beta/users', { email: 'spy@acme.test', role: 'Admin' }),
      a.delete(`/api/v1/tenants/beta/users/${betaUserId}`),
      a.delete(`/api/v1/tenants/acme/users/${betaUserId}`),
      a.get('/api/v1/tenants'),
      a.get('/api/v1/auth/users?tenant_id=beta'),
      a.post('/api/v1/auth/users', { tenant_id: 'beta', email: 'spy2@acme.test', role: 'Admin' }),
      a.delete(`/api/v1/auth/users/${betaUserId}`),
    ]
    for (const res of await Promise.all(probes)) {
      expect([403, 404]).toContain(res.status)
      expect(JSON.stringify(res.body)).not.toContain('admin@beta.test')
    }
    const own = await api(p.gateway, acmeAdmin).get('/api/v1/auth/users')
    expect(own.body.data.every((u: { tenant_id: string }) => u.tenant_id === 'acme')).toBe(true)
    const beta = await api(p.gateway, betaAdmin).get('/api/v1/tenants/beta')
    expect(beta.body.name).toBe('Beta Ltd')
    expect(
      (await api(p.gateway, betaAdmin).get('/api/v1/tenants/beta/users')).body.data,
    ).toHaveLength(1)
  })

  it('upgrades Free to Pro moving 10,000 shared rows with reads working, and back again', async () => {
    const sharedPath = join(p.dataDir, 'tenants', '_shared', 'analytics.db')
    const shared = openDatabase(sharedPath, { migrations: analyticsMigrations })
    seedShared(shared, 'acme', ROWS + 3, 3)
    seedShared(shared, 'beta', 500)
    const before = statsOf(shared, 'acme')
    const betaBefore = statsOf(shared, 'beta')
    expect(before.n).toBe(ROWS + 3)

    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
    })
    const seen: Array<{ topic: string; body: any }> = []
    sub.on('message', (topic, payload) => seen.push({ topic, body: JSON.parse(String(payload)) }))
    await sub.subscribeAsync('#', { qos: 1 })

    const reads: Array<Promise<number>> = []
    let moving = true
    const reader = (async () => {
      while (moving) {
        reads.push(
          api(p.gateway, acmeAdmin)
            .get('/api/v1/tenants/acme/features')
            .then((r) => r.status),
        )
        await Bun.sleep(2)
      }
    })()
    const up = await api(p.gateway, acmeAdmin).put('/api/v1/tenants/acme/upgrade', { plan: 'pro' })
    moving = false
    await reader
    expect(up.status).toBe(200)
    expect(up.body).toMatchObject({
      id: 'acme',
      plan: 'pro',
      isolation: 'schema',
      previous_plan: 'free',
      moved_rows: ROWS + 3,
      features: { advanced_analytics: true, bulk_upload: true, api_access: true },
    })
    expect(new Set(await Promise.all(reads))).toEqual(new Set([200]))

    const placement = JSON.parse(
      readFileSync(join(p.dataDir, 'tenants', 'acme', 'placement.json'), 'utf8'),
    )
    expect(placement).toMatchObject({
      isolation: 'schema',
      plan: 'pro',
      status: 'active',
      features: { advanced_analytics: true },
    })
    const own = openDatabase(join(p.dataDir, 'tenants', 'acme', 'analytics.db'), {
      migrations: analyticsMigrations,
    })
    expect(statsOf(own, 'acme')).toEqual(before)
    expect(statsOf(shared, 'acme')).toEqual({ n: 0, s: null })
    expect(statsOf(shared, 'beta')).toEqual(betaBefore)
    expect(
      own.sqlite.query<{ n: number }, []>('SELECT count(DISTINCT id) AS n FROM outbox').get()?.n,
    ).toBe(ROWS + 3)

    const moved = () => seen.filter((m) => m.topic === 'mobilemoney.e2e.moved')
    const changed = () =>
      seen.filter((m) => m.topic === 'mobilemoney.tenants.changed' && m.body.data.plan === 'pro')
    await eventually(
      () => moved().length >= 3 && changed().length >= 1,
      10_000,
      'the moved outbox rows and tenants.changed on the broker',
    )
    expect(moved().map((m) => m.body.tenant_id)).toEqual(['acme', 'acme', 'acme'])
    expect(changed()[0]!.body).toMatchObject({
      tenant_id: 'acme',
      data: { change: 'updated', plan: 'pro', isolation: 'schema' },
    })
    // The door went through billing: its event of the same change finds the plan applied.
    const billed = await eventually(
      () =>
        seen.find(
          (m) =>
            m.topic === 'mobilemoney.subscriptions.changed' &&
            m.body.tenant_id === 'acme' &&
            m.body.data.plan === 'pro',
        ),
      10_000,
      "billing's subscriptions.changed",
    )
    expect(billed.body.data).toMatchObject({ previous_plan: 'free', plan_terms: { tier: 'pro' } })
    const subscription = await api(p.gateway, acmeAdmin).get('/api/v1/billing/subscriptions/acme')
    expect(subscription.body.plan).toBe('pro')
    const tenantDb = new Database(join(p.dataDir, 'platform', 'tenant.db'), { readonly: true })
    await eventually(
      () =>
        tenantDb
          .query('SELECT 1 FROM inbox WHERE consumer = ? AND event_id = ?')
          .get('tenant', billed.body.id),
      10_000,
      'the tenant service handling the event',
    )
    const moves = tenantDb
      .query<{ n: number }, [string]>('SELECT count(*) AS n FROM tenant_moves WHERE tenant_id = ?')
      .get('acme')!.n
    tenantDb.close()
    expect(moves, 'one move for the change, whichever way it arrived').toBe(1)
    expect(statsOf(own, 'acme')).toEqual(before)
    await sub.endAsync()

    const down = await api(p.gateway, operator).put('/api/v1/tenants/acme/upgrade', {
      plan: 'free',
    })
    expect(down.body).toMatchObject({ plan: 'free', isolation: 'shared', moved_rows: ROWS + 3 })
    expect(statsOf(shared, 'acme')).toEqual(before)
    expect(statsOf(own, 'acme')).toEqual({ n: 0, s: null })
    expect((await api(p.gateway, acmeAdmin).get('/api/v1/tenants/acme')).body.features).toEqual({
      advanced_analytics: false,
      bulk_upload: true,
      api_access: true,
    })
    own.close()
    shared.close()
  }, 60_000)

  it('moves an Enterprise tenant to the dedicated path the operator names', async () => {
    // A tenant of its own with rows in the shared file: acme's plan is the upgrade test's.
    const made = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'ent-co',
      name: 'Ent Co',
      admin_email: 'admin@ent-co.test',
      admin_password: 'ent-co-admin-password',
    })
    expect(made.status).toBe(201)
    const shared = openDatabase(join(p.dataDir, 'tenants', '_shared', 'analytics.db'), {
      migrations: analyticsMigrations,
    })
    seedShared(shared, 'ent-co', 1003)
    shared.close()
    const res = await api(p.gateway, operator).put('/api/v1/tenants/ent-co/upgrade', {
      plan: 'enterprise',
      database_path: 'volumes/ent-co',
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ isolation: 'database', database_path: 'volumes/ent-co' })
    const db = openDatabase(join(p.dataDir, 'volumes', 'ent-co', 'analytics.db'), {
      migrations: analyticsMigrations,
    })
    expect(statsOf(db, 'ent-co').n).toBe(1003)
    db.close()
    const admin = await p.login('admin@ent-co.test', 'ent-co-admin-password')
    const asAdmin = await api(p.gateway, admin).put('/api/v1/tenants/ent-co/upgrade', {
      plan: 'enterprise',
      database_path: '/tmp/elsewhere',
    })
    expect(asAdmin.status).toBe(403)
  })

  it('refuses malformed and path-traversal tenant ids in path, header, body and token', async () => {
    const op = api(p.gateway, operator)
    for (const path of [
      '/api/v1/tenants/..%2F..%2Fevil',
      '/api/v1/tenants/%2E%2E',
      '/api/v1/tenants/ACME',
      '/api/v1/tenants/a',
      '/api/v1/tenants/evil%00x/features',
      '/api/v1/tenants/_shared',
    ]) {
      const res = await op.get(path)
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
    }
    for (const id of ['../../evil', '..', 'a/b', '_shared', 'platform', 'Evil', 'x'.repeat(64)]) {
      const res = await op.post('/api/v1/tenants', { id, name: 'Evil', admin_email: 'e@evil.test' })
      expect(res.status).toBe(422)
    }
    const body = await op.post('/api/v1/auth/users', {
      tenant_id: '../../evil',
      email: 'e2@evil.test',
      role: 'Admin',
    })
    expect(body.status).toBe(422)
    const direct = await api(p.url('tenant'), acmeAdmin).get('/api/v1/tenants/acme', {
      'x-tenant-id': '../../evil',
    })
    expect(direct.status).toBe(403)
    const viaGateway = await api(p.gateway, acmeAdmin).get('/api/v1/tenants/acme', {
      'x-tenant-id': '../../evil',
    })
    expect(viaGateway.status).toBe(422)
    const otherViaGateway = await api(p.gateway, acmeAdmin).get('/api/v1/tenants/acme', {
      'x-tenant-id': 'beta',
    })
    expect(otherViaGateway.status).toBe(200)
    expect(otherViaGateway.body.id).toBe('acme')
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const forged = await new SignJWT({ tenant_id: '../../evil', role: 'Admin' })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('mmp')
      .setAudience('mmp')
      .setSubject('usr_x')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey)
    for (const base of [p.gateway, p.url('tenant')]) {
      expect((await api(base, forged).get('/api/v1/tenants/acme')).status).toBe(401)
    }
    const outsideNow = readdirSync(dirname(p.dataDir)).filter((e) => !outsideBefore.has(e))
    expect(outsideNow.filter((e) => e.includes('evil'))).toEqual([])
    expect(existsSync(join(root, 'evil'))).toBe(false)
    for (const path of allPaths(join(p.dataDir, 'tenants'))) {
      expect(path.toLowerCase()).not.toContain('evil')
    }
    for (const dir of readdirSync(join(p.dataDir, 'tenants'))) {
      expect(dir).toMatch(/^(_shared|[a-z0-9][a-z0-9-]{1,62})$/)
    }
  })

  it('suspends a tenant (reads work, changes refused) and resumes it', async () => {
    expect((await api(p.gateway, betaAdmin).post('/api/v1/tenants/beta/suspend')).status).toBe(403)
    const s = await api(p.gateway, operator).post('/api/v1/tenants/beta/suspend')
    expect(s.body.status).toBe('suspended')
    expect((await api(p.gateway, betaAdmin).get('/api/v1/tenants/beta')).body.status).toBe(
      'suspended',
    )
    expect(
      (await api(p.gateway, betaAdmin).patch('/api/v1/tenants/beta', { name: 'x' })).status,
    ).toBe(403)
    const r = await api(p.gateway, operator).post('/api/v1/tenants/beta/resume')
    expect(r.body.status).toBe('active')
  })

  it('manages tenants and users from the mmp CLI through the running platform', async () => {
    const env = {
      ...process.env,
      MMP_PORT_OFFSET: String(p.offset),
      MMP_DATA_DIR: p.dataDir,
      MMP_OPERATOR_EMAIL: OPERATOR.email,
      MMP_OPERATOR_PASSWORD: OPERATOR.password,
      // consola quietens itself under a test runner; the CLI's own messages are checked here
      NODE_ENV: 'production',
      TEST: '',
    }
    const mmp = (...args: string[]) => {
      const out = Bun.spawnSync([process.execPath, join(root, 'cmd/main.ts'), ...args], {
        env,
        cwd: root,
      })
      return { code: out.exitCode, out: out.stdout.toString() + out.stderr.toString() }
    }
    const created = mmp(
      'tenant',
      'create',
      '--name',
      'Delta Shop',
      '--admin-email',
      'admin@delta.test',
      '--json',
    )
    expect(created.code).toBe(0)
    expect(JSON.parse(created.out)).toMatchObject({ id: 'delta-shop', plan: 'free' })
    expect(mmp('tenant', 'list').out).toContain('delta-shop')
    const up = mmp('tenant', 'upgrade', 'delta-shop', 'pro')
    expect(up.code).toBe(0)
    expect(up.out).toContain('is on pro')
    const invited = mmp(
      'user',
      'invite',
      'v@delta.test',
      '--tenant',
      'delta-shop',
      '--role',
      'Viewer',
      '--json',
    )
    expect(JSON.parse(invited.out)).toMatchObject({ email: 'v@delta.test', role: 'Viewer' })
    expect(mmp('user', 'list', '--tenant', 'delta-shop').out).toContain('v@delta.test')
    expect(mmp('user', 'remove', JSON.parse(invited.out).id, '--tenant', 'delta-shop').code).toBe(0)
    expect(mmp('tenant', 'features', 'delta-shop', 'bulk_upload=off').out).toMatch(
      /bulk_upload\s+off/,
    )
    expect(mmp('tenant', 'delete', 'delta-shop', '--confirm', 'nope').code).not.toBe(0)
    expect(mmp('tenant', 'delete', 'delta-shop', '--confirm', 'delta-shop').code).toBe(0)
    expect(existsSync(join(p.dataDir, 'tenants', 'delta-shop'))).toBe(false)
    expect(mmp('tenant', 'show', 'delta-shop').code).not.toBe(0)
  }, 60_000)

  it('erases a tenant behind ?confirm: its rows in shared files, its folder and its users', async () => {
    // A tenant of its own to erase: acme and beta serve the other tests, in any order.
    const made = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'doomed',
      name: 'Doomed Ltd',
      admin_email: 'admin@doomed.test',
      admin_password: 'doomed-admin-password',
    })
    expect(made.status).toBe(201)
    const shared = openDatabase(join(p.dataDir, 'tenants', '_shared', 'analytics.db'), {
      migrations: analyticsMigrations,
    })
    seedShared(shared, 'doomed', 500)
    expect(statsOf(shared, 'doomed').n).toBe(500)
    expect((await api(p.gateway, operator).delete('/api/v1/tenants/doomed')).status).toBe(422)
    const del = await api(p.gateway, operator).delete('/api/v1/tenants/doomed?confirm=doomed')
    expect(del.status).toBe(200)
    expect(del.body).toMatchObject({ id: 'doomed', deleted: true, users_removed: 1 })
    expect(statsOf(shared, 'doomed').n).toBe(0)
    expect(existsSync(join(p.dataDir, 'tenants', 'doomed'))).toBe(false)
    expect((await api(p.gateway, operator).get('/api/v1/tenants/doomed')).status).toBe(404)
    const login = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'admin@doomed.test',
      password: 'doomed-admin-password',
    })
    expect(login.status).toBe(401)
    shared.close()
  })
})
