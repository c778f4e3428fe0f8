import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { cli } from './support/cli.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantOwner } from './support/tenants.ts'

/**
 * A backup over HTTP is a long operator action like a tier move: `POST /api/v1/backups` answers
 * 202 with a job of tenant `platform`, the job names the folder it wrote into `backup.dir` and
 * its size, and `mmp restore` accepts that folder. Only the operator may start one; a backup that
 * cannot be written ends its job failed with a problem, never a 500.
 */
const root = join(import.meta.dir, '..')

function mmp(args: string[]) {
  const r = Bun.spawnSync([process.execPath, join(root, 'cmd/main.ts'), ...args], { cwd: root })
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() }
}

describe('backups over HTTP', () => {
  let p: TestPlatform
  let operator: string
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-backup-api-'))
  const backupDir = join(scratch, 'backups')

  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,broker',
      env: { MMP_BACKUP_DIR: backupDir, MMP_BACKUP_KEEP: '20' },
    })
    operator = await p.login()
  }, 60_000)
  afterAll(async () => {
    await p?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  /** Starts a backup as `token`, asking for the job at once. */
  const start = (token: string, body: unknown = {}, headers: Record<string, string> = {}) =>
    api(p.gateway, token).post('/api/v1/backups', body, { prefer: 'respond-async', ...headers })
  /** Follows a job answered 202 until it ends. */
  const follow = (location: string) =>
    eventually(
      async () => {
        const r = await api(p.gateway, operator).get(location)
        return r.body?.status !== 'running' ? r.body : null
      },
      30_000,
      'the backup job',
    )

  it('answers 202 with a job that ends with the backup written into backup.dir, which restores', async () => {
    const owner = await createTenantOwner(p, { id: 'bk-shop' })
    expect((await owner.admin.get('/api/v1/tenants/bk-shop')).status).toBe(200)
    const key = { 'idempotency-key': 'backup-bk-shop-1' }
    const res = await start(operator, {}, key)
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ kind: 'backup', tenant_id: 'platform', status: 'running' })
    const location = res.headers.get('location')!
    expect(location).toBe(`/api/v1/tenants/platform/jobs/${res.body.id}`)
    // A client that retries with its key gets the same job, and where to follow it.
    const again = await start(operator, {}, key)
    expect([again.status, again.body.id, again.headers.get('location')]).toEqual([
      202,
      res.body.id,
      location,
    ])
    const job = await follow(location)
    expect(job).toMatchObject({ status: 'succeeded', error: null })
    const b = job.result
    expect(b.backup).toStartWith('mmp-backup-')
    expect(dirname(b.path)).toBe(backupDir)
    expect(b.bytes).toBeGreaterThan(0)
    expect(existsSync(join(b.path, 'manifest.json'))).toBe(true)
    expect(readdirSync(backupDir).filter((n) => n.endsWith('.partial'))).toEqual([])
    // A tenant's Admin may not follow the platform's jobs.
    const other = await owner.admin.get(location)
    expect(other.status).toBe(403)

    const restored = join(scratch, 'restored')
    const r = mmp(['restore', '--from', b.path, '--data-dir', restored, '--json'])
    expect([r.code, r.out]).toEqual([0, expect.stringContaining('"data_dir"')])
    expect(existsSync(join(restored, 'tenants', 'bk-shop'))).toBe(true)
  }, 60_000)

  it('refuses anyone but the operator with 403, and a folder named in the body with 422', async () => {
    const { token } = await createTenantOwner(p, { id: 'bk-other' })
    const before = existsSync(backupDir) ? readdirSync(backupDir).length : 0
    const denied = await start(token)
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ code: 'FORBIDDEN' })
    const named = await start(operator, { to: join(scratch, 'elsewhere') })
    expect(named.status).toBe(422)
    expect(existsSync(join(scratch, 'elsewhere'))).toBe(false)
    expect(existsSync(backupDir) ? readdirSync(backupDir).length : 0).toBe(before)
  })

  it('ends the job failed with a problem when backup.dir cannot be written', async () => {
    // A file where the folder should be: no process, root included, can write a backup there.
    rmSync(backupDir, { recursive: true, force: true })
    writeFileSync(backupDir, 'not a folder')
    try {
      const res = await start(operator)
      expect(res.status).toBe(202)
      const job = await follow(res.headers.get('location')!)
      expect(job.status).toBe('failed')
      expect(job.error).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE' })
      expect(job.error.detail).toContain('backup.dir')
    } finally {
      rmSync(backupDir, { force: true })
      mkdirSync(backupDir, { recursive: true })
    }
  }, 60_000)

  it('`mmp backup` without --to has the platform write one and follows its job', async () => {
    const r = await cli(p, ['backup', '--json'])
    expect(r.code).toBe(0)
    const b = JSON.parse(r.stdout)
    expect(dirname(b.path)).toBe(backupDir)
    expect(existsSync(join(b.path, 'manifest.json'))).toBe(true)
    expect(mmp(['backup', 'verify', b.path]).code).toBe(0)
    const both = await cli(p, ['backup', '--to', join(scratch, 'x')])
    expect(both.code).toBe(1)
    expect(both.output).toContain('Pass one of them')
  }, 60_000)
})
