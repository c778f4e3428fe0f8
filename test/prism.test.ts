/**
 * An integrator's check (issue: an API integrators can trust): Stoplight Prism's validating proxy,
 * given the merged /openapi.json and put in front of the gateway with `--errors`, sees a journey
 * of requests and answers and finds no violation in either direction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import {
  api,
  eventually,
  pickOffset,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const PRISM = join(
  import.meta.dir,
  '..',
  'node_modules',
  '@stoplight',
  'prism-cli',
  'dist',
  'index.js',
)

describe('Prism validating proxy over the journey', () => {
  let p: TestPlatform
  let prism: Subprocess
  let proxy: string
  let dir: string
  let logs = ''

  beforeAll(async () => {
    p = await startTestPlatform()
    dir = mkdtempSync(join(tmpdir(), 'mmp-prism-'))
    const file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(await (await fetch(`${p.gateway}/openapi.json`)).json()))
    const port = 4000 + ((await pickOffset()) % 20_000)
    prism = spawn(['node', PRISM, 'proxy', file, p.gateway, '--port', String(port), '--errors'], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const pump = async (s: ReadableStream<Uint8Array>) => {
      for await (const c of s) logs += new TextDecoder().decode(c)
    }
    void pump(prism.stdout as ReadableStream<Uint8Array>)
    void pump(prism.stderr as ReadableStream<Uint8Array>)
    proxy = `http://127.0.0.1:${port}`
    await eventually(
      async () => /Prism is listening/.test(logs) || null,
      30_000,
      `Prism listening\n${logs}`,
    )
  }, 60_000)
  afterAll(async () => {
    prism?.kill()
    await p?.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  /** An answer through Prism: its status, and the violations Prism found, if any. */
  const clean = (r: { status: number; headers: Headers; body: any }) => ({
    status: r.status,
    violations: r.headers.get('sl-violations'),
    prismError: String(r.body?.type ?? '').includes('stoplight.io/prism') ? r.body : null,
  })

  it('passes a tenant journey through the validating proxy without a violation', async () => {
    const login = await api(proxy).post('/api/v1/auth/login', {
      email: 'operator@mmp.test',
      password: 'operator-test-password',
    })
    expect(clean(login)).toEqual({ status: 200, violations: null, prismError: null })
    const operator = login.body.access_token as string
    const created = await api(proxy, operator).post('/api/v1/tenants', {
      id: 'prism-co',
      name: 'Prism Co',
      admin_email: 'owner@prism-co.test',
      admin_password: 'tembo-chai-mvua-2031',
    })
    expect(clean(created)).toEqual({ status: 201, violations: null, prismError: null })
    await createTenants(p.gateway, operator, 'prism-other')
    const owner = await api(proxy).post('/api/v1/auth/login', {
      email: 'owner@prism-co.test',
      password: 'tembo-chai-mvua-2031',
    })
    const token = owner.body.access_token as string
    const c = api(proxy, token)
    const steps: Array<
      [string, () => Promise<{ status: number; headers: Headers; body: any }>, number]
    > = [
      [
        'import a batch',
        () =>
          c.post('/api/v1/parser/transactions', {
            transactions: [
              {
                occurred_at: '2026-11-01T10:00:00Z',
                amount: 100,
                direction: 'in',
                description: 'sale',
                receipt_number: 'PRSM000001',
              },
            ],
          }),
        200,
      ],
      ['read the summary', () => c.get('/api/v1/analytics/summary'), 200],
      ['list transactions', () => c.get('/api/v1/analytics/transactions'), 200],
      [
        'push a payment',
        () =>
          c.post('/api/v1/payments/stkpush', {
            phone_number: '254712345678',
            amount: 10,
            account_reference: 'A1',
            transaction_desc: 'Order',
          }),
        202,
      ],
      [
        'register a webhook',
        () =>
          c.post('/api/v1/webhooks', {
            url: 'https://hooks.example.com/mmp',
            events: ['payment.success'],
          }),
        201,
      ],
      ['read usage', () => c.get('/api/v1/billing/usage/prism-co'), 200],
      ['read cashflow', () => c.get('/api/v1/cashflow/summary/prism-co'), 200],
      ['list rules', () => c.get('/api/v1/categorize/rules'), 200],
      [
        'a malformed date is a documented 422',
        () => c.get('/api/v1/analytics/summary?from=bad'),
        422,
      ],
      ['another tenant is a documented 403', () => c.get('/api/v1/billing/usage/prism-other'), 403],
    ]
    const wrong: string[] = []
    for (const [what, step, status] of steps) {
      const got = clean(await step())
      if (got.status !== status || got.violations || got.prismError)
        wrong.push(`${what}: ${JSON.stringify(got)}`)
    }
    expect(wrong).toEqual([])
  }, 60_000)

  it('is a real check: a request that breaks the document is refused by Prism itself', async () => {
    const login = await api(proxy).post('/api/v1/auth/login', {
      email: 'owner@prism-co.test',
      password: 'tembo-chai-mvua-2031',
    })
    // Plain fetch: Prism's own refusal is not an answer of the platform's to record.
    const res = await fetch(`${proxy}/api/v1/payments/stkpush`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${login.body.access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        phone_number: '254712345678',
        amount: 'ten',
        account_reference: 'A1',
        transaction_desc: 'Order',
      }),
    })
    const bad = { status: res.status, headers: res.headers, body: await res.json() }
    expect(bad.status).toBe(422)
    expect(clean(bad).prismError ?? clean(bad).violations).toBeTruthy()
  })
})
