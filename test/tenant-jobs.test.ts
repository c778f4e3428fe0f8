import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * A tier move that takes longer than the request waits answers 202 with a job to follow, never a
 * 504 while it goes on; `mmp tenant upgrade` follows it to the end.
 */
const root = join(import.meta.dir, '..')

describe('long tier moves as jobs', () => {
  let p: TestPlatform
  let operator: string
  beforeAll(async () => {
    p = await startTestPlatform()
    operator = await p.login()
    await createTenants(p.gateway, operator, 'slowmove', 'climove')
    for (const tenant of ['slowmove', 'climove']) {
      const rows = Array.from({ length: 500 }, (_, i) => ({
        occurred_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
        amount: 100 + (i % 50),
        direction: i % 3 ? 'in' : 'out',
        description: `sale ${i}`,
        receipt_number: `${tenant.toUpperCase()}R${i}`,
      }))
      const r = await api(p.gateway, operator).post('/api/v1/parser/transactions', {
        tenant_id: tenant,
        transactions: rows,
      })
      expect(r.status).toBe(200)
    }
  }, 60_000)
  afterAll(() => p?.dispose())

  it('answers 202 with a job, and the job ends with the move done', async () => {
    const res = await fetch(`${p.gateway}/api/v1/tenants/slowmove/upgrade`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${operator}`,
        'content-type': 'application/json',
        prefer: 'respond-async',
      },
      body: JSON.stringify({ plan: 'pro' }),
    })
    expect(res.status).toBe(202)
    const job = (await res.json()) as { id: string; status: string }
    expect(job.status).toBe('running')
    expect(res.headers.get('location')).toBe(`/api/v1/tenants/slowmove/jobs/${job.id}`)
    const follow = () => api(p.gateway, operator).get(`/api/v1/tenants/slowmove/jobs/${job.id}`)
    await eventually(async () => (await follow()).body?.status !== 'running', 30_000, 'the job')
    const done = await follow()
    expect(done.body).toMatchObject({ status: 'succeeded', result: { plan: 'pro' } })
    const tenant = await api(p.gateway, operator).get('/api/v1/tenants/slowmove')
    expect(tenant.body).toMatchObject({ plan: 'pro', isolation: 'schema' })
    // Another tenant's Admin does not see it.
    const other = await api(p.gateway, operator).get(`/api/v1/tenants/climove/jobs/${job.id}`)
    expect(other.status).toBe(404)
  })

  it('`mmp tenant upgrade` prints the outcome of the move', async () => {
    const proc = Bun.spawn(
      [
        process.execPath,
        join(root, 'cmd/main.ts'),
        'tenant',
        'upgrade',
        'climove',
        'pro',
        '--json',
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_PORT_OFFSET: String(p.offset),
          MMP_OPERATOR_EMAIL: 'operator@mmp.test',
          MMP_OPERATOR_PASSWORD: 'operator-test-password',
        },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    expect(code).toBe(0)
    expect(out).toContain('"plan": "pro"')
  }, 60_000)
})
