import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'bun'
import { topics } from '../schema/events.ts'
import { routes } from '../schema/routes.ts'
import { WEBHOOK_EVENTS } from '../schema/vocabulary.ts'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

const root = join(import.meta.dir, '..')
type Obj = Record<string, any>

/**
 * The merged document as integrators read it: Redocly's recommended rules at 0 errors, codegen
 * without `string | number` for integers, every operation with its errors and an example, the
 * six webhook payloads, the broker's AsyncAPI document and a /docs page that loads nothing else.
 */
describe('the merged OpenAPI document', () => {
  let p: TestPlatform
  let doc: Obj
  let dir: string
  let file: string
  beforeAll(async () => {
    p = await startTestPlatform()
    doc = await (await fetch(`${p.gateway}/openapi.json`)).json()
    dir = mkdtempSync(join(tmpdir(), 'mmp-openapi-'))
    file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
  })
  afterAll(async () => {
    await p.dispose()
    rmSync(dir, { recursive: true, force: true })
  })
  const operations = () =>
    Object.entries(doc.paths as Obj).flatMap(([path, item]) =>
      Object.entries(item as Obj).map(([method, op]) => ({ path, method, op: op as Obj })),
    )

  it('passes Redocly lint with the recommended rules and no errors', () => {
    const out = spawnSync(
      [join(root, 'node_modules/.bin/redocly'), 'lint', file, '--format=json'],
      {
        cwd: root,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    )
    const report = JSON.parse(out.stdout.toString()) as {
      totals: { errors: number; warnings: number }
      problems: Array<{ ruleId: string; severity: string; message: string }>
    }
    const errors = report.problems.filter((x) => x.severity === 'error')
    expect(errors.map((e) => `${e.ruleId}: ${e.message}`)).toEqual([])
  }, 60_000)

  it('generates TypeScript with integers as number, never string | number', () => {
    const out = spawnSync([join(root, 'node_modules/.bin/openapi-typescript'), file], { cwd: root })
    const ts = out.stdout.toString()
    expect(ts).toContain('paths')
    expect(ts).not.toMatch(/string \| number|number \| string/)
    expect(JSON.stringify(doc)).not.toMatch(/"format":"(integer|numeric)"|"nullable"/)
  }, 60_000)

  it('states for every operation its success, its problem+json errors and an example', () => {
    const missing: string[] = []
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses ?? {})
      const what = `${method.toUpperCase()} ${path}`
      if (!statuses.some((s) => s.startsWith('2'))) missing.push(`${what}: no success`)
      if (op.security?.length && !['401', '403', '429'].every((s) => statuses.includes(s)))
        missing.push(`${what}: no 401/403/429`)
      if (op.requestBody && !['413', '422'].every((s) => statuses.includes(s)))
        missing.push(`${what}: no 413/422`)
      if (path.includes('{tenant_id}') && !statuses.includes('404')) missing.push(`${what}: no 404`)
      for (const [s, r] of Object.entries(op.responses as Obj)) {
        if (s === '204' && r.content) missing.push(`${what}: a body on 204`)
        const json = r.content?.['application/json']
        if (json && json.example === undefined) missing.push(`${what}: ${s} without an example`)
      }
    }
    expect(missing).toEqual([])
    expect(doc.components.schemas.Problem).toBeDefined()
    expect(doc.components.schemas.ValidationProblem).toBeDefined()
    expect(doc['x-mmp-schema-clashes']).toBeUndefined()
  })

  it('names the resources as component schemas', () => {
    for (const name of [
      'Transaction',
      'Payment',
      'Disbursement',
      'Invoice',
      'Plan',
      'Tenant',
      'WebhookEndpoint',
    ])
      expect(Object.keys(doc.components.schemas)).toContain(name)
  })

  it('documents Idempotency-Key and its 409 on every create the route manifest marks', () => {
    const wrong = routes
      .filter((r) => r.create)
      .map((r) => {
        const path = r.path.replace(/:([a-z_]+)/g, '{$1}')
        const op = doc.paths[path]?.[r.method.toLowerCase()]
        const takes = JSON.stringify(op?.parameters ?? []).includes('IdempotencyKey')
        return takes && op?.responses?.['409'] ? null : `${r.method} ${r.path}`
      })
      .filter(Boolean)
    expect(routes.filter((r) => r.create).length).toBeGreaterThan(15)
    expect(wrong).toEqual([])
  })

  it('holds the Daraja limits in the STK push schema', () => {
    const body =
      doc.paths['/api/v1/payments/stkpush'].post.requestBody.content['application/json'].schema
        .properties
    expect(body.account_reference.maxLength).toBe(12)
    expect(body.transaction_desc.maxLength).toBe(13)
    expect(body.amount).toMatchObject({ type: 'integer', minimum: 1, maximum: 250000 })
    expect(body.phone_number.pattern).toBeString()
  })

  it('describes the six webhook payloads under webhooks', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort())
  })

  it('serves an AsyncAPI 3 document of every broker topic', async () => {
    const async = await (await fetch(`${p.gateway}/asyncapi.json`)).json()
    expect(async.asyncapi).toBe('3.0.0')
    const addresses = Object.values(async.channels as Obj).map((c) => c.address)
    expect(addresses.sort()).toEqual(Object.values(topics).sort())
  })

  it('serves /docs without any external request', async () => {
    const html = await (await fetch(`${p.gateway}/docs`)).text()
    expect(html).not.toMatch(/(src|href)=["']https?:/)
    expect(html).toContain('curl')
  })
})
