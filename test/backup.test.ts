import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

/**
 * The restore drill: a backup taken while writes go on, verified, restored into a new data dir
 * and started. Every row committed before the backup began is there, every database passes
 * integrity_check, tokens signed before still verify and webhook deliveries are signed with the
 * secret the endpoint was registered with.
 */
const root = join(import.meta.dir, '..')
const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'

function mmp(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([process.execPath, join(root, 'cmd/main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, MMP_LOG_FORMAT: 'json', ...env },
  })
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }
}

async function mmpAsync(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, MMP_LOG_FORMAT: 'json', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

const txn = (receipt: string, i: number) => ({
  // Inside the window every door keeps (2007 to a day ahead).
  occurred_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  amount: 100 + (i % 50),
  direction: i % 3 === 0 ? 'out' : 'in',
  counterparty_name: `Customer ${i % 7}`,
  description: 'sale',
  receipt_number: receipt,
})

/** Every file under `dir` with its mode. */
function modes(dir: string): Array<{ path: string; mode: number; dir: boolean }> {
  const out: Array<{ path: string; mode: number; dir: boolean }> = []
  const visit = (p: string) => {
    const st = statSync(p)
    out.push({ path: p, mode: st.mode & 0o777, dir: st.isDirectory() })
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n))
  }
  visit(dir)
  return out
}

describe('backup and restore drill', () => {
  let a: TestPlatform
  let b: TestPlatform | null = null
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-backup-'))
  const enterpriseDir = join(scratch, 'vol2', 'big')
  const backupDir = join(scratch, 'backup')
  const restored = join(scratch, 'restored')
  let operator: string
  let receiver: ReturnType<typeof startWebhookReceiver>
  /** Receipts the platform acknowledged, with the time the answer came. */
  const acked: Array<{ tenant: string; receipt: string; at: number }> = []
  let backupBegan = 0

  beforeAll(async () => {
    receiver = startWebhookReceiver(SECRET)
    mkdirSync(join(scratch, 'vol2'), { recursive: true })
    a = await startTestPlatform()
    operator = await a.login()
    await createTenants(a.gateway, operator, 'shop', { id: 'duka', plan: 'pro' })
    const big = await api(a.gateway, operator).post('/api/v1/tenants', {
      id: 'big',
      name: 'Big Co',
      plan: 'enterprise',
      admin_email: 'owner@big.test',
      admin_password: 'big-Owner-Passphrase-42',
      database_path: enterpriseDir,
    })
    expect(big.status).toBe(201)
    for (const tenant of ['shop', 'duka', 'big']) {
      const rows = Array.from({ length: 200 }, (_, i) => txn(`${tenant.toUpperCase()}A${i}`, i))
      const r = await api(a.gateway, operator).post('/api/v1/parser/transactions', {
        tenant_id: tenant,
        transactions: rows,
      })
      expect(r.body).toMatchObject({ accepted: 200 })
      for (const row of rows) acked.push({ tenant, receipt: row.receipt_number, at: Date.now() })
    }
    const hook = await api(a.gateway, operator).post('/api/v1/webhooks', {
      tenant_id: 'duka',
      url: `${receiver.url}/hook`,
      events: ['payment.success'],
      secret: SECRET,
    })
    expect(hook.status).toBe(201)
  }, 60_000)

  afterAll(async () => {
    await b?.dispose()
    await a?.dispose()
    receiver?.stop()
    rmSync(scratch, { recursive: true, force: true })
  })

  // The drill's two steps, each done once, by whichever test needs it first: every test awaits
  // what it reads, so the file passes in any order.
  let backupTaken: Promise<{ out: Awaited<ReturnType<typeof mmpAsync>>; during: number }>
  const takeBackup = () => {
    backupTaken ??= backUpWhileWriting()
    return backupTaken
  }
  let restoreDone: Promise<ReturnType<typeof mmp> & { found: ReturnType<typeof inspect> | null }>
  const restoreBackup = () => {
    restoreDone ??= takeBackup().then(async () => {
      const r = mmp(['restore', '--from', backupDir, '--data-dir', restored, '--json'])
      // What the restore left, read before a platform opens (and locks) the databases.
      const found = r.code === 0 ? inspect() : null
      if (r.code === 0) b = await startTestPlatform({ dataDir: restored })
      return { ...r, found }
    })
    return restoreDone
  }
  const tenantFiles: Record<string, string[]> = {
    duka: ['tenants', 'duka', 'parser.db'],
    shop: ['tenants', '_shared', 'parser.db'],
    big: ['tenants', 'big', 'parser.db'],
  }
  /** Each restored database's integrity check, the receipts each tenant's parser.db holds, modes. */
  const inspect = () => {
    const integrity: Array<[string, unknown]> = []
    const receipts: Record<string, Set<string>> = {}
    const read = <T>(file: string, fn: (db: Database) => T): T => {
      const db = new Database(file, { readonly: true })
      try {
        integrity.push([file, db.query('PRAGMA integrity_check').get()])
        return fn(db)
      } finally {
        db.close()
      }
    }
    for (const [tenant, path] of Object.entries(tenantFiles)) {
      const sql = 'SELECT receipt_number AS r FROM transactions WHERE tenant_id = ?'
      receipts[tenant] = read(join(restored, ...path), (db) => {
        const rows = db.query(sql).all(tenant) as Array<{ r: string }>
        return new Set(rows.map((x) => x.r))
      })
    }
    for (const name of readdirSync(join(restored, 'platform')))
      if (name.endsWith('.db')) read(join(restored, 'platform', name), () => null)
    return { integrity, receipts, modes: modes(restored) }
  }

  const backUpWhileWriting = async () => {
    let writing = true
    let n = 0
    const writer = (async () => {
      while (writing) {
        const tenant = ['duka', 'shop', 'big'][n % 3]!
        const receipt = `${tenant.toUpperCase()}W${n++}`
        const r = await api(a.gateway, operator).post('/api/v1/parser/transactions', {
          tenant_id: tenant,
          transactions: [txn(receipt, n)],
        })
        if (r.status === 200 && r.body.accepted === 1)
          acked.push({ tenant, receipt, at: Date.now() })
      }
    })()
    await eventually(() => acked.length > 620, 10_000, 'writes before the backup')
    backupBegan = Date.now()
    const out = await mmpAsync(['backup', '--to', backupDir, '--json'], {
      MMP_DATA_DIR: a.dataDir,
    })
    const during = acked.filter((x) => x.at > backupBegan).length
    writing = false
    await writer
    return { out, during }
  }

  it('takes a backup while writes go on, with a manifest, 0600 files and 0700 folders', async () => {
    const { out, during } = await takeBackup()
    expect(out.stderr).toBe('')
    expect(out.code).toBe(0)
    const summary = JSON.parse(out.stdout)
    expect(summary).toMatchObject({ external: [{ tenant: 'big', database_path: enterpriseDir }] })
    expect(Date.parse(summary.started_at)).toBeGreaterThanOrEqual(backupBegan - 1000)
    // The platform kept taking writes while the copy ran.
    expect(during).toBeGreaterThan(0)

    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8'))
    const paths = manifest.files.map((f: { path: string }) => f.path)
    for (const p of [
      'data/keys/jwt-private.pem',
      'data/keys/jwt-public.pem',
      'data/secrets.json',
      'data/platform/auth.db',
      'data/platform/webhook.db',
      'data/tenants/duka/parser.db',
      'data/tenants/duka/placement.json',
      'data/tenants/_shared/parser.db',
      'external/big/parser.db',
    ])
      expect(paths).toContain(p)
    expect(paths.some((p: string) => /-(wal|shm)$/.test(p))).toBe(false)
    const auth = manifest.files.find((f: { path: string }) => f.path === 'data/platform/auth.db')
    expect(auth).toMatchObject({ kind: 'database', sha256: expect.any(String) })
    expect(auth.tables.users).toBeGreaterThan(0)
    for (const m of modes(backupDir))
      expect([m.path, m.mode]).toEqual([m.path, m.dir ? 0o700 : 0o600])
  }, 60_000)

  it('verifies the backup, and says which file is damaged in a tampered copy', async () => {
    await takeBackup()
    const ok = mmp(['backup', 'verify', backupDir])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toMatch(/^ok .*: \d+ files, \d+ databases, \d+ rows/m)

    const broken = join(scratch, 'broken')
    cpSync(backupDir, broken, { recursive: true })
    const file = join(broken, 'data', 'secrets.json')
    writeFileSync(file, readFileSync(file, 'utf8').replace('"mqtt_username"', '"mqtt_usernamE"'))
    const bad = mmp(['backup', 'verify', broken, '--json'])
    expect(bad.code).toBe(1)
    expect(JSON.parse(bad.stdout)).toMatchObject({
      ok: false,
      problems: ['data/secrets.json: checksum differs from the manifest'],
    })
  })

  it('refuses to restore into a non-empty folder, with one line', async () => {
    await takeBackup()
    const busy = join(scratch, 'busy')
    mkdirSync(busy)
    writeFileSync(join(busy, 'something'), 'x')
    const r = mmp(['restore', '--from', backupDir, '--data-dir', busy])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toContain('is not empty')
  })

  it('restores into a new data dir that starts with every row committed before the backup', async () => {
    const r = await restoreBackup()
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({
      data_dir: restored,
      relocated: [{ tenant: 'big', from: enterpriseDir, to: join(restored, 'tenants', 'big') }],
    })
    const { integrity, receipts, modes: restoredModes } = r.found!
    for (const m of restoredModes) expect([m.path, m.mode]).toEqual([m.path, m.dir ? 0o700 : 0o600])
    for (const [file, result] of integrity)
      expect([file, result]).toEqual([file, { integrity_check: 'ok' }])
    expect(integrity.length).toBeGreaterThan(3)
    for (const [tenant, have] of Object.entries(receipts)) {
      const before = acked.filter((x) => x.tenant === tenant && x.at < backupBegan)
      expect(before.length).toBeGreaterThan(200)
      expect(before.filter((x) => !have.has(x.receipt))).toEqual([])
    }
  }, 60_000)

  it('accepts tokens signed before the backup and reads the Enterprise tenant from its new place', async () => {
    await restoreBackup()
    const tenants = await api(b!.gateway, operator).get('/api/v1/tenants')
    expect(tenants.status).toBe(200)
    const big = await api(b!.gateway, operator).get('/api/v1/tenants/big')
    expect(big.body).toMatchObject({ database_path: 'tenants/big' })
    const owner = await b!.login('owner@big.test', 'big-Owner-Passphrase-42')
    const list = await api(b!.gateway, owner).get('/api/v1/analytics/transactions?limit=5')
    expect(list.status).toBe(200)
  })

  it('signs webhook deliveries with the secret the endpoint was registered with', async () => {
    await restoreBackup()
    const r = await api(b!.gateway, operator).post('/api/v1/webhooks/trigger', {
      tenant_id: 'duka',
      event: 'payment.success',
      data: { drill: true },
    })
    expect(r.status).toBe(202)
    const hit = await eventually(
      () => receiver.hits.find((h) => h.body?.data?.drill === true),
      10_000,
      'the delivery from the restored platform',
    )
    expect(hit.verified).toBe(true)
  })
})
