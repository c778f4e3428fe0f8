/**
 * `mmp demo seed` on a running platform: the demo fits the tenant's plan (it says how many days it
 * wrote when it stops early) and its rows are not billable usage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { fitDemo } from '../services/parser/demo.ts'
import { cli } from './support/cli.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const _root = join(import.meta.dir, '..')

describe('mmp demo seed', () => {
  let p: TestPlatform
  let operator: string

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,parser,billing,broker' })
    operator = await p.login()
    await createTenants(p.gateway, operator, 'freeshop')
  }, 60_000)

  afterAll(async () => {
    await p?.stop()
  })

  const transactionsUsed = async () => {
    const res = await api(p.gateway, operator).get('/api/v1/billing/usage/freeshop')
    expect(res.status).toBe(200)
    return res.body.metrics.transactions as { used: number; limit: number }
  }

  it('writes the newest days that fit a Free plan, says how many, and bills none of it', async () => {
    const before = await transactionsUsed()
    expect(before).toEqual({ used: 0, limit: 10_000 })
    const args = ['demo', 'seed', '--tenant', 'freeshop', '--days', '365', '--seed', '4']
    const end = '2026-06-30'
    const seeded = await cli(p, [...args, '--end', end])
    expect(seeded.code).toBe(0)
    const expected = fitDemo({ days: 365, seed: 4, end }, 10_000)
    expect(expected.days).toBeLessThan(365)
    expect(seeded.output).toContain(
      `freeshop: ${expected.days} days, ${expected.transactions.length} transactions written`,
    )
    expect(seeded.output).toContain(
      `stopped early: wrote the last ${expected.days} of 365 days, because the free plan allows 10,000 transactions a month and 0 are used`,
    )

    // A real batch after the demo is metered and admitted: once billing has counted it, the
    // demo's thousands are known not to be in the count (usage moved by exactly one).
    const real = await api(p.gateway, operator).post('/api/v1/parser/transactions', {
      tenant_id: 'freeshop',
      transactions: [
        {
          occurred_at: '2026-06-30T09:00:00Z',
          amount: 250,
          direction: 'in',
          description: 'Funds received from 254700000001 - REAL CUSTOMER',
          receipt_number: 'TREAL00001',
        },
      ],
    })
    expect(real.status).toBe(200)
    expect(real.body).toMatchObject({ accepted: 1 })
    const after = await eventually(
      async () => {
        const used = await transactionsUsed()
        return used.used > 0 ? used : null
      },
      10_000,
      'billing counting the real transaction',
    )
    expect(after).toEqual({ used: 1, limit: 10_000 })
  }, 120_000)

  it('refuses demo rows from anyone but the platform operator', async () => {
    const owner = await p.login('owner@freeshop.test', 'freeshop-Owner-Passphrase-42')
    const res = await api(p.gateway, owner).post('/api/v1/parser/transactions', {
      demo: true,
      transactions: [
        {
          occurred_at: '2026-06-30T09:00:00Z',
          amount: 1,
          direction: 'in',
          description: 'x',
        },
      ],
    })
    expect(res.status).toBe(403)
    expect(res.body.detail).toContain('only the platform operator may write demo data')
  })
})
