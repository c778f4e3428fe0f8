import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually, pickOffset } from './support/platform.ts'

const root = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'mmp-build-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('the single executable', () => {
  it('runs with no source folder beside it: migrations, worker threads and all parts are inside', async () => {
    const out = join(dir, 'mmp')
    // Built as `npm run build` builds it, with the worker modules' entries.
    const build = Bun.spawnSync([process.execPath, join(root, 'scripts/build.ts'), out], {
      cwd: root,
      stderr: 'pipe',
    })
    expect(build.exitCode).toBe(0)
    const version = Bun.spawnSync([out, 'version'], { cwd: dir })
    expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+/)

    const offset = await pickOffset()
    const proc = Bun.spawn([out, 'serve', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        MMP_PORT_OFFSET: String(offset),
        MMP_OPERATOR_PASSWORD: 'binary-test-pass',
        MMP_LOG_LEVEL: 'warn',
      },
      stdout: 'ignore',
      stderr: 'pipe',
    })
    try {
      await eventually(
        async () => {
          const checks = [9000, 8010].map((port) =>
            fetch(`http://127.0.0.1:${port + offset}/health`).then(
              (r) => r.ok,
              () => false,
            ),
          )
          return (await Promise.all(checks)).every(Boolean)
        },
        15_000,
        'the built binary to answer /health',
      )
      const login = await fetch(`http://127.0.0.1:${9000 + offset}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'operator@mmp.local', password: 'binary-test-pass' }),
      })
      expect(login.status).toBe(200)
      // A statement is parsed on the statement worker's thread, bundled as an entry of its own.
      const { access_token: token } = (await login.json()) as { access_token: string }
      const gateway = `http://127.0.0.1:${9000 + offset}/api/v1`
      const auth = { authorization: `Bearer ${token}` }
      const tenant = await fetch(`${gateway}/tenants`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'binary-shop',
          name: 'Binary Shop',
          admin_email: 'owner@binary-shop.test',
          admin_password: 'binary-shop-Owner-Passphrase-42',
        }),
      })
      expect(tenant.status).toBe(201)
      const form = new FormData()
      form.set('tenant_id', 'binary-shop')
      form.set('file', Bun.file(join(root, 'test/fixtures/mpesa-statement.csv')))
      const imported = await fetch(`${gateway}/statements`, {
        method: 'POST',
        headers: auth,
        body: form,
      })
      expect(imported.status).toBe(201)
      expect(((await imported.json()) as { accepted: number }).accepted).toBeGreaterThan(0)
    } finally {
      proc.kill('SIGTERM')
      const code = await proc.exited
      const stderr = await new Response(proc.stderr as ReadableStream).text()
      if (code !== 0) console.error(stderr)
      expect(code).toBe(0)
      expect(stderr).not.toContain('statement reading thread could not start')
    }
  }, 60_000)
})
