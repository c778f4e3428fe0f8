import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

interface Operation {
  method: string
  path: string
  door: 'path' | 'query' | 'body'
}

/** Every operation of the merged document that names a tenant, and by which door. */
function tenantDoors(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params: Array<{ in: string; name: string }> = op.parameters ?? []
      const named = (where: string) => params.some((p) => p.in === where && p.name === 'tenant_id')
      const schema = op.requestBody?.content?.['application/json']?.schema
      if (named('path')) out.push({ method, path, door: 'path' })
      else if (schema?.properties?.tenant_id) out.push({ method, path, door: 'body' })
      else if (named('query')) out.push({ method, path, door: 'query' })
    }
  }
  return out
}

/** The files under the data dir's tenants folder, so a test can see that nothing was created. */
function tenantFiles(dataDir: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    )
  return walk(join(dataDir, 'tenants'))
    .filter((f) => !/-(wal|shm|journal)$/.test(f))
    .sort()
}

describe('unknown and erased tenants', () => {
  let p: TestPlatform
  let operator: string
  let goneAdmin: string
  let ops: Operation[]

  beforeAll(async () => {
    p = await startTestPlatform()
    operator = await p.login()
    await createTenants(p.gateway, operator, 'live-co', 'gone-co')
    goneAdmin = await p.login('owner@gone-co.test', 'gone-co-Owner-Passphrase-42')
    const erased = await api(p.gateway, operator).delete('/api/v1/tenants/gone-co?confirm=gone-co')
    expect(erased.status).toBe(200)
    ops = tenantDoors(await (await fetch(`${p.gateway}/openapi.json`)).json())
  }, 60_000)
  afterAll(() => p.dispose())

  const call = (op: Operation, tenantId: string, token: string) => {
    const path = op.path
      .replace('{tenant_id}', tenantId)
      .replace(/\{[a-z_]+\}/g, 'xyz_00000000000000000000000000')
    const client = api(p.gateway, token)
    const query =
      op.door === 'query'
        ? `?tenant_id=${tenantId}`
        : op.method === 'delete' && op.path === '/api/v1/tenants/{tenant_id}'
          ? `?confirm=${tenantId}`
          : ''
    const target = path + query
    const body = op.door === 'body' ? { tenant_id: tenantId } : {}
    switch (op.method) {
      case 'get':
        return client.get(target)
      case 'delete':
        return client.delete(target)
      case 'put':
        return client.put(target, body)
      case 'patch':
        return client.patch(target, body)
      default:
        return client.post(target, body)
    }
  }

  it('finds the routes that name a tenant in the OpenAPI document', () => {
    expect(ops.length).toBeGreaterThan(40)
    expect(ops.map((o) => o.door)).toEqual(expect.arrayContaining(['path', 'query', 'body']))
  })

  for (const tenantId of ['nosuch', 'gone-co']) {
    it(`answers 404 TENANT_NOT_FOUND for ${tenantId} on every route that names it, creating nothing`, async () => {
      const before = tenantFiles(p.dataDir)
      const wrong: string[] = []
      for (const op of ops) {
        const res = await call(op, tenantId, operator)
        if (res.status !== 404 || res.body?.code !== 'TENANT_NOT_FOUND')
          wrong.push(
            `${op.method.toUpperCase()} ${op.path} (${op.door}): ${res.status} ${res.body?.code}`,
          )
      }
      expect(wrong).toEqual([])
      expect(tenantFiles(p.dataDir)).toEqual(before)
      expect(before.some((f) => f.includes(`/tenants/${tenantId}/`))).toBe(false)
    }, 60_000)
  }

  it('refuses a token that outlived the erasure of its tenant', async () => {
    // Erasing a tenant removes its users, which revokes their tokens (401); were one still
    // accepted, the tenant check answers 404. Nothing is served either way.
    const res = await api(p.gateway, goneAdmin).get('/api/v1/analytics/summary')
    expect([401, 404]).toContain(res.status)
    const write = await api(p.gateway, goneAdmin).post('/api/v1/parser/transactions', {
      transactions: [
        { occurred_at: '2026-01-01T00:00:00Z', amount: 5, direction: 'in', description: 'x' },
      ],
    })
    expect([401, 404]).toContain(write.status)
  })

  it('keeps serving a tenant that exists', async () => {
    const res = await api(p.gateway, operator).get('/api/v1/analytics/summary?tenant_id=live-co')
    expect(res.status).toBe(200)
    const sub = await api(p.gateway, operator).get('/api/v1/billing/subscriptions/live-co')
    expect(sub.status).toBe(200)
  })
})
