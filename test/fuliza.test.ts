import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantOwner } from './support/tenants.ts'

const DAY = 86_400_000
const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'
const money = (cents: number) =>
  `"${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}"`

interface Row {
  receipt: string
  at: string
  details: string
  cents: number
  balance: number
}

/**
 * A personal statement of an owner on Fuliza, in the 2021–23 layout (newest first, one receipt
 * for a payment, its charge and the overdraft drawn for it, all in one second): every morning a
 * customer pays 1,000 and M-Pesa takes what Fuliza is owed from it at once; every noon the owner
 * pays a supplier 1,400 (charge 20), Fuliza drawing what the balance lacks. Earned 1,000 a day,
 * spent 1,420: a deficit funded by loans, and the balance is 0.00 every afternoon.
 */
function fulizaStatement(lastDay: string, days: number) {
  const rows: Row[] = []
  let balance = 0
  let owed = 0
  let seq = 0
  const receipt = () => `QF${String(++seq).padStart(8, '0')}`
  const lastMs = Date.parse(`${lastDay}T00:00:00Z`)
  for (let d = days - 1; d >= 0; d--) {
    const date = new Date(lastMs - d * DAY).toISOString().slice(0, 10)
    const morning = `${date} 08:15:00`
    balance += 100_000
    rows.push({
      receipt: receipt(),
      at: morning,
      details: 'Funds received from - 2547******930 JOHN MWANGI KAMAU',
      cents: 100_000,
      balance,
    })
    const repay = Math.min(owed, balance)
    if (repay > 0) {
      balance -= repay
      owed -= repay
      rows.push({
        receipt: receipt(),
        at: morning,
        details: 'OD Loan Repayment to 232323 - M-PESA Overdraw',
        cents: -repay,
        balance,
      })
    }
    const noon = `${date} 12:30:00`
    const r = receipt()
    const draw = 142_000 - balance
    balance += draw
    owed += draw
    rows.push({ receipt: r, at: noon, details: 'OverDraft of Credit Party', cents: draw, balance })
    balance -= 140_000
    rows.push({
      receipt: r,
      at: noon,
      details: 'Pay Bill Fuliza M-Pesa to 522522 - TWIGA FOODS Acc. ORD1',
      cents: -140_000,
      balance,
    })
    balance -= 2_000
    rows.push({ receipt: r, at: noon, details: 'Pay Bill Charge', cents: -2_000, balance })
  }
  const lines = [...rows]
    .reverse()
    .map((x) =>
      [
        x.receipt,
        x.at,
        x.details,
        'Completed',
        x.cents > 0 ? money(x.cents) : '',
        x.cents < 0 ? money(x.cents) : '',
        money(x.balance),
      ].join(','),
    )
  return {
    csv: ['M-PESA STATEMENT', 'Customer Name:,DUKA YA FULIZA', '', HEADER, ...lines, ''].join('\n'),
    rows: rows.length,
    closing: balance,
  }
}

/**
 * Issue 32: an owner who ran a deficit on Fuliza was shown net +156,308 and "HEALTHY 100/100".
 * The same shape of statement through the gateway: the cashflow summary's net is what was earned
 * less what was spent, the loans are their own line, and the health is not healthy.
 */
describe('a Fuliza-heavy statement end to end', () => {
  let p: TestPlatform
  const lastDay = new Date(Date.now() + 3 * 3_600_000 - DAY).toISOString().slice(0, 10)
  const statement = fulizaStatement(lastDay, 60)

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,parser,categorizer,cashflow,broker' })
  }, 90_000)
  afterAll(async () => {
    await p?.dispose()
  })

  /** A Pro tenant of the test's own with the statement imported: its Admin and the answer. */
  const imported = async (id: string) => {
    const { admin, token } = await createTenantOwner(p, { id, plan: 'pro' })
    const form = new FormData()
    form.append('file', new File([statement.csv], 'fuliza.csv', { type: 'text/csv' }))
    const res = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    return { owner: admin, status: res.status, body: (await res.json()) as any }
  }

  it('imports every row, proven by its own running balance', async () => {
    const { status, body } = await imported('fuliza')
    expect(status).toBe(201)
    expect(body).toMatchObject({
      read: statement.rows,
      accepted: statement.rows,
      rejected: 0,
      proof: { verdict: 'proven', balance: { chains: true, closing: 0 } },
    })
  }, 30_000)

  it('gives the true net and is not healthy', async () => {
    const { owner, status } = await imported('owed')
    expect(status).toBe(201)
    const s = await eventually(
      async () => {
        const r = await owner.get('/api/v1/cashflow/summary/owed')
        return r.body?.as_of === lastDay && r.body.balance === 0 && r.body.inflow === 30_000
          ? r.body
          : undefined
      },
      30_000,
      'cashflow to see the statement',
    )
    // 30 days: earned 30 × 1,000, spent 30 × (1,400 + 20); Fuliza is its own line.
    expect(s).toMatchObject({
      days: 30,
      inflow: 30_000,
      outflow: 42_600,
      net: -12_600,
      balance: 0,
      burn_rate: 420,
      runway_days: 0,
    })
    expect(s.financing.kinds.loan_drawn.inflow).toBeGreaterThan(0)
    expect(s.financing.kinds.loan_repaid.outflow).toBeGreaterThan(0)
    // What the balance follows: every movement nets to the change of the balance (0 → 0).
    expect(s.total.net).toBeCloseTo(s.net + s.financing.net + s.transfers.net, 2)
    expect(s.total.net).toBe(0)
    expect(s.health_status).not.toBe('healthy')
    expect(s.health_status).toBe('at_risk')
    const codes = s.reasons.map((r: { code: string }) => r.code)
    expect(codes).not.toContain('HEALTHY')
    expect(codes).toEqual(
      expect.arrayContaining([
        'OUTFLOW_EXCEEDS_INFLOW',
        'RELIES_ON_LOANS',
        'DEFICIT_FUNDED_BY_LOANS',
      ]),
    )
    expect(s.data_quality).toMatchObject({ verdict: 'proven', finding: null })
  }, 40_000)
})
