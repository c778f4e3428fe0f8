import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'

interface Row {
  receipt: string
  at: string
  details: string
  paidIn?: number
  withdrawn?: number
}

/** Nairobi wall-clock time of an instant, as a statement prints it. */
const nairobi = (iso: string) =>
  new Date(Date.parse(iso) + 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')

/** A personal statement CSV of the rows in time order, its running balance from `opening`. */
function statementCsv(rows: Row[], opening: number): string {
  let balance = opening
  const lines = rows.map((r) => {
    balance += (r.paidIn ?? 0) - (r.withdrawn ?? 0)
    return [
      r.receipt,
      nairobi(r.at),
      r.details,
      'Completed',
      r.paidIn ? r.paidIn.toFixed(2) : '',
      r.withdrawn ? (-r.withdrawn).toFixed(2) : '',
      balance.toFixed(2),
    ].join(',')
  })
  return ['M-PESA STATEMENT', '', 'DETAILED STATEMENT', HEADER, ...lines.reverse(), ''].join('\n')
}

/**
 * Ledger legs and kinds end to end (DESIGN §16, README "One ledger" and "Analytics figures"): the
 * rows of one receipt are all kept, an STK payment and its statement row are still one, and the
 * figures count what their words say.
 */
describe('ledger legs and kinds', () => {
  let p: TestPlatform
  const clients: Record<string, ReturnType<typeof api>> = {}

  beforeAll(async () => {
    p = await startTestPlatform({
      env: { MMP_RATE_LIMIT_FREE: '1000000', MMP_RATE_LIMIT_IP: '1000000' },
    })
    for (const id of ['charges', 'stkleg', 'fuliza'])
      clients[id] = await createTenantAdmin(p, { id, plan: 'pro' })
  }, 90_000)
  afterAll(async () => {
    await p?.dispose()
  })

  const upload = async (tenant: string, csv: string) => {
    const form = new FormData()
    form.append('file', new File([csv], `${tenant}.csv`))
    const token = await p.login(`owner@${tenant}.test`, `${tenant}-Owner-Passphrase-42`)
    const res = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const list = async (tenant: string, query = '') =>
    (await clients[tenant]!.get(`/api/v1/analytics/transactions?limit=500${query}`)).body
      .data as Array<Record<string, any>>
  /** Waits until analytics holds `count` transactions, then reads the summary. */
  const summaryAt = async (tenant: string, count: number) => {
    await eventually(
      async () =>
        (await clients[tenant]!.get('/api/v1/analytics/summary')).body.total_transactions === count,
      20_000,
      `${count} transactions of ${tenant} in analytics`,
    )
    return (await clients[tenant]!.get('/api/v1/analytics/summary')).body
  }

  it('keeps a payment and its charge under one receipt, the charge an expense', async () => {
    const at = '2026-03-02T07:00:00.000Z'
    const res = await upload(
      'charges',
      statementCsv(
        [
          {
            receipt: 'TC1LEG0001',
            at,
            details: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1234',
            withdrawn: 1500,
          },
          { receipt: 'TC1LEG0001', at, details: 'Pay Bill Charge', withdrawn: 23 },
        ],
        5000,
      ),
    )
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 0, rejected: 0 })
    const summary = await summaryAt('charges', 2)
    expect(summary).toMatchObject({ total_out: 1523, revenue: 0, expenses: 1523, net: -1523 })
    expect(summary.by_kind.charge).toEqual({ count: 1, amount_in: 0, amount_out: 23 })
    const rows = await list('charges')
    expect(rows.map((t) => [t.kind, t.leg, t.amount]).sort()).toEqual([
      ['charge', 'charge', 23],
      ['supplier_payment', '', 1500],
    ])
    await eventually(
      async () => (await list('charges', '&kind=charge'))[0]?.category === 'Other',
      20_000,
      'the charge categorized Other',
    )
    const csv = await (
      await fetch(`${p.gateway}/api/v1/analytics/export?format=csv&kind=charge`, {
        headers: {
          authorization: `Bearer ${await p.login('owner@charges.test', 'charges-Owner-Passphrase-42')}`,
        },
      })
    ).text()
    expect(csv.split('\r\n')[0]).toEndWith(',kind,leg')
    expect(csv).toContain(',charge,charge\r\n')
  }, 60_000)

  it('keeps an STK payment and its statement row one transaction, its charge a second', async () => {
    const c = clients.stkleg!
    const push = await c.post('/api/v1/payments/stkpush', {
      phone_number: '254712345678',
      amount: 800,
      account_reference: 'ORDER9',
      transaction_desc: 'Order 9',
    })
    expect(push.status).toBe(202)
    const paid = await eventually(
      async () => {
        const r = await c.get(`/api/v1/payments/status/${push.body.checkout_request_id}`)
        return r.body.status === 'success' ? r.body : null
      },
      20_000,
      'the STK payment settled',
    )
    const receipt = paid.mpesa_receipt_number as string
    await summaryAt('stkleg', 1)
    const res = await upload(
      'stkleg',
      statementCsv(
        [
          {
            receipt,
            at: paid.updated_at,
            details: 'Funds received from 254712345678 - JANE DOE',
            paidIn: 800,
          },
          { receipt, at: paid.updated_at, details: 'Business Charge', withdrawn: 8 },
        ],
        10_000,
      ),
    )
    expect(res.body).toMatchObject({ accepted: 1, duplicates: 1, matched: 1, rejected: 0 })
    const summary = await summaryAt('stkleg', 2)
    expect(summary).toMatchObject({ revenue: 800, expenses: 8, net: 792, total_in: 800 })
    const rows = (await list('stkleg')).filter((t) => t.receipt_number === receipt)
    expect(rows.map((t) => [t.source, t.kind, t.leg, t.amount]).sort()).toEqual([
      ['payment', 'customer_payment', '', 800],
      ['statement', 'charge', 'charge', 8],
    ])
  }, 60_000)

  it('counts a Fuliza-heavy statement truly: draws not revenue, repayments not expenses, lenders not customers', async () => {
    const at = (h: number) => `2026-03-05T${String(h).padStart(2, '0')}:00:00.000Z`
    const rows: Row[] = [
      // A supplier paid with Fuliza topping up the balance, and its charge.
      {
        receipt: 'TF1LEG0001',
        at: at(6),
        details: 'OverDraft of Credit Party',
        paidIn: 600,
      },
      {
        receipt: 'TF1LEG0001',
        at: at(6),
        details: 'Customer Transfer to 0722000111 - JOHN SUPPLIER',
        withdrawn: 1000,
      },
      {
        receipt: 'TF1LEG0001',
        at: at(6),
        details: 'Customer Transfer of Funds Charge',
        withdrawn: 13,
      },
      // A customer pays; Fuliza takes its repayment from that money under the same receipt.
      {
        receipt: 'TF1LEG0002',
        at: at(8),
        details: 'Funds received from 254711000222 - MARY CUSTOMER',
        paidIn: 2000,
      },
      {
        receipt: 'TF1LEG0002',
        at: at(8),
        details: 'OD Loan Repayment to 232323 - M-PESA Overdraw',
        withdrawn: 600,
      },
      // Savings moved out and back.
      {
        receipt: 'TF1LEG0003',
        at: at(9),
        details: 'M-Shwari Deposit',
        withdrawn: 300,
      },
      {
        receipt: 'TF1LEG0004',
        at: at(10),
        details: 'M-Shwari Withdraw',
        paidIn: 100,
      },
    ]
    const res = await upload('fuliza', statementCsv(rows, 420))
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ accepted: 7, duplicates: 0, rejected: 0 })
    const s = await summaryAt('fuliza', 7)
    expect(s).toMatchObject({
      total_in: 2700,
      total_out: 1913,
      revenue: 2000,
      expenses: 1013,
      net: 987,
      balance_change: 787,
    })
    expect(s.by_kind).toMatchObject({
      loan_drawn: { count: 1, amount_in: 600, amount_out: 0 },
      loan_repaid: { count: 1, amount_in: 0, amount_out: 600 },
      savings_out: { count: 1, amount_out: 300 },
      savings_in: { count: 1, amount_in: 100 },
      charge: { count: 1, amount_out: 13 },
      customer_payment: { count: 1, amount_in: 2000 },
      supplier_payment: { count: 1, amount_out: 1000 },
    })
    const customers = await clients.fuliza!.get('/api/v1/analytics/customers?limit=50')
    expect(customers.body.data.map((c: any) => c.total_in)).toEqual([2000])
    const suppliers = await clients.fuliza!.get(
      '/api/v1/analytics/customers?direction=out&limit=50',
    )
    expect(suppliers.body.data.map((c: any) => c.total_out)).toEqual([1000])
    await eventually(
      async () => {
        const kinds = await list('fuliza')
        return kinds.every((t) => t.category !== null) ? kinds : null
      },
      20_000,
      'every row categorized',
    )
    for (const t of await list('fuliza'))
      if (t.kind !== 'customer_payment')
        expect([t.kind, t.category]).not.toEqual([t.kind, 'Revenue'])
  }, 60_000)
})
