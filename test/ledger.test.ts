import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { makeStatementPdf } from '../scripts/make-statement-pdf.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'

interface Row {
  receipt: string
  at: string
  details: string
  paidIn?: number
  withdrawn?: number
  balance: number
}

/** Nairobi wall-clock time of an instant, as a statement prints it. */
const nairobi = (iso: string) =>
  new Date(Date.parse(iso) + 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')
const nairobiDay = (iso: string) => nairobi(iso).slice(0, 10)

function statementCsv(rows: Row[]): string {
  const lines = rows.map((r) =>
    [
      r.receipt,
      nairobi(r.at),
      r.details,
      'Completed',
      r.paidIn ? r.paidIn.toFixed(2) : '',
      r.withdrawn ? (-r.withdrawn).toFixed(2) : '',
      r.balance.toFixed(2),
    ].join(','),
  )
  return ['M-PESA STATEMENT', '', 'DETAILED STATEMENT', HEADER, ...lines, ''].join('\n')
}

/**
 * One ledger end to end (README "One ledger"): a receipt reported by two channels, in either
 * order or at the same moment, is one transaction in analytics, cashflow and billing usage, and
 * the import answer counts the second report as a matched duplicate.
 */
describe('one ledger across channels', () => {
  let p: TestPlatform
  const clients: Record<string, ReturnType<typeof api>> = {}
  const tenants = ['stkfirst', 'stmtfirst', 'smsfirst', 'cbfirst', 'racing', 'recon', 'reconpage']

  beforeAll(async () => {
    p = await startTestPlatform({
      env: {
        // Long enough to read the receipt from the simulator and import it before the callback.
        MMP_SIMULATOR_DELAY_MS: '2500',
        MMP_RATE_LIMIT_FREE: '1000000',
        MMP_RATE_LIMIT_IP: '1000000',
      },
    })
    const operator = await p.login()
    await createTenants(p.gateway, operator, ...tenants.map((id) => ({ id, plan: 'pro' })))
    for (const t of tenants)
      clients[t] = api(p.gateway, await p.login(`owner@${t}.test`, `${t}-Owner-Passphrase-42`))
  }, 90_000)
  afterAll(async () => {
    await p?.dispose()
  })

  const upload = async (
    tenant: string,
    body: string | Uint8Array,
    name: string,
    password?: string,
  ) => {
    const form = new FormData()
    form.append('file', new File([body as BlobPart], name))
    if (password) form.append('password', password)
    const token = (await p.login(`owner@${tenant}.test`, `${tenant}-Owner-Passphrase-42`)) as string
    const res = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  const stkPush = async (tenant: string, amount: number) => {
    const r = await clients[tenant]!.post('/api/v1/payments/stkpush', {
      phone_number: '254712345678',
      amount,
      account_reference: 'ORDER7',
      transaction_desc: 'Order 7',
    })
    expect(r.status).toBe(202)
    return r.body.checkout_request_id as string
  }
  const settled = (tenant: string, checkout: string) =>
    eventually(
      async () => {
        const r = await clients[tenant]!.get(`/api/v1/payments/status/${checkout}`)
        return r.body.status === 'success' ? r.body : null
      },
      20_000,
      `payment ${checkout} success`,
    )

  const rowsOf = async (tenant: string, receipt: string) => {
    const r = await clients[tenant]!.get('/api/v1/analytics/transactions?limit=500')
    expect(r.status).toBe(200)
    return (r.body.data as Array<Record<string, any>>).filter((t) => t.receipt_number === receipt)
  }
  /**
   * Waits until the statement's balance reached analytics and cashflow (whose balance is the
   * newest row's), then reads every count.
   */
  const ledgerOf = async (
    tenant: string,
    receipt: string,
    balance: number,
    day: string,
    latestBalance = balance,
  ) => {
    const c = clients[tenant]!
    await eventually(
      async () => (await rowsOf(tenant, receipt)).some((t) => t.balance === balance),
      20_000,
      `${receipt} enriched with the statement balance in analytics`,
    )
    await eventually(
      async () =>
        (await c.get(`/api/v1/cashflow/summary/${tenant}`)).body.balance === latestBalance,
      20_000,
      'the statement balance in cashflow',
    )
    await eventually(
      async () =>
        (await c.get(`/api/v1/billing/usage/${tenant}`)).body.metrics?.statements.used === 1,
      20_000,
      'the statement metered',
    )
    return {
      rows: await rowsOf(tenant, receipt),
      summary: (await c.get('/api/v1/analytics/summary')).body,
      daily: (await c.get(`/api/v1/cashflow/daily?from=${day}&to=${day}`)).body.data[0],
      usage: (await c.get(`/api/v1/billing/usage/${tenant}`)).body.metrics,
    }
  }

  it('counts an STK payment once when the statement reporting it is imported later', async () => {
    const checkout = await stkPush('stkfirst', 500)
    const paid = await settled('stkfirst', checkout)
    const receipt = paid.mpesa_receipt_number as string
    await eventually(async () => (await rowsOf('stkfirst', receipt)).length === 1, 20_000)
    const csv = statementCsv([
      {
        receipt,
        at: paid.updated_at,
        details: 'Funds received from 254712345678 - JANE DOE',
        paidIn: 500,
        balance: 10_500,
      },
    ])
    const res = await upload('stkfirst', csv, 'jan.csv')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ accepted: 0, duplicates: 1, matched: 1, rejected: 0 })

    const l = await ledgerOf('stkfirst', receipt, 10_500, nairobiDay(paid.updated_at))
    expect(l.rows).toHaveLength(1)
    expect(l.rows[0]).toMatchObject({
      amount: 500,
      source: 'payment',
      balance: 10_500,
      description: 'Funds received from 254712345678 - JANE DOE',
    })
    expect(l.summary).toMatchObject({ total_transactions: 1, total_in: 500 })
    expect(l.daily).toMatchObject({ inflow: 500, outflow: 0 })
    expect(l.usage.transactions.used).toBe(1)

    const again = await upload('stkfirst', csv, 'jan-again.csv')
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 1, matched: 0 })
  }, 60_000)

  it('counts a statement row once when the STK callback for it arrives after the import', async () => {
    const checkout = await stkPush('stmtfirst', 700)
    const sim = api(p.url('simulator'))
    const planned = (await sim.get(`/simulator/requests/${checkout}`)).body
    const receipt = planned.receipt as string
    expect(receipt).toMatch(/^[A-Z0-9]{10}$/)
    const at = new Date().toISOString()
    const res = await upload(
      'stmtfirst',
      statementCsv([
        {
          receipt,
          at,
          details: 'Funds received from 254712345678 - JANE',
          paidIn: 700,
          balance: 3_700,
        },
      ]),
      'feb.csv',
    )
    expect(res.body).toMatchObject({ accepted: 1, duplicates: 0 })
    const paid = await settled('stmtfirst', checkout)
    expect(paid.mpesa_receipt_number).toBe(receipt)
    // The callback's enrichment (the checkout's account reference) is the sign it was applied.
    await eventually(async () => {
      const r = await clients.stmtfirst!.get('/api/v1/analytics/summary')
      const usage = await clients.stmtfirst!.get('/api/v1/billing/usage/stmtfirst')
      return r.body.total_transactions === 1 && usage.body.metrics.payments.used === 1
    }, 20_000)
    const l = await ledgerOf('stmtfirst', receipt, 3_700, nairobiDay(at))
    expect(l.rows).toHaveLength(1)
    expect(l.rows[0]).toMatchObject({ amount: 700, source: 'statement', balance: 3_700 })
    expect(l.summary).toMatchObject({ total_transactions: 1, total_in: 700 })
    expect(l.daily).toMatchObject({ inflow: 700 })
    expect(l.usage.transactions.used).toBe(1)
  }, 60_000)

  it('counts an SMS confirmation once when the statement reporting it is imported later', async () => {
    const receipt = 'SMS1LEDG01'
    const sms = await clients.smsfirst!.post('/api/v1/parser/sms', {
      messages: [
        `${receipt} Confirmed.You have received Ksh1,200.00 from JOHN KAMAU 0712345678 on 5/1/24 at 10:15 AM  New M-PESA balance is Ksh5,200.00.`,
      ],
    })
    expect(sms.body).toMatchObject({ accepted: 1 })
    const at = '2024-01-05T07:15:00.000Z'
    const res = await upload(
      'smsfirst',
      statementCsv([
        {
          receipt,
          at,
          details: 'Funds received from 254712345678 - JOHN KAMAU',
          paidIn: 1_200,
          balance: 5_250,
        },
      ]),
      'sms.csv',
    )
    expect(res.body).toMatchObject({ accepted: 0, duplicates: 1, matched: 1 })
    const l = await ledgerOf('smsfirst', receipt, 5_250, '2024-01-05')
    expect(l.rows).toHaveLength(1)
    expect(l.rows[0]).toMatchObject({ source: 'sms', amount: 1_200 })
    expect(l.summary).toMatchObject({ total_transactions: 1, total_in: 1_200 })
    expect(l.daily).toMatchObject({ inflow: 1_200 })
    expect(l.usage.transactions.used).toBe(1)
  }, 60_000)

  const confirmC2b = async (url: string, receipt: string, amount: number, at: string) => {
    const time = nairobi(at).replace(/[- :]/g, '')
    // The payment happened at M-Pesa (the simulator), so the confirmation's Transaction Status
    // check finds it: a confirmation the provider does not know is never counted.
    const seeded = await fetch(`${p.url('simulator')}/simulator/c2b/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        TransID: receipt,
        ShortCode: url.match(/ref=(\d+)/)![1],
        Amount: amount,
        TransTime: time,
      }),
    })
    expect(seeded.status).toBe(200)
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        TransactionType: 'Buy Goods',
        TransID: receipt,
        TransTime: time,
        TransAmount: amount.toFixed(2),
        BusinessShortCode: url.match(/ref=(\d+)/)![1],
        BillRefNumber: '',
        InvoiceNumber: '',
        OrgAccountBalance: '',
        ThirdPartyTransID: '',
        MSISDN: '2547 ***** 604',
        FirstName: 'JANE',
        MiddleName: '',
        LastName: 'DOE',
      }),
    })
    expect(r.status).toBe(200)
    // Counted once the provider's Transaction Status agreed (moments later, asynchronously).
    const client = clients[tillTenant.get(url)!]!
    await eventually(async () => {
      const c = await client.get(`/api/v1/payments/c2b/payments/${receipt}`)
      return c.body.status === 'verified' ? c.body : null
    }, 20_000)
  }
  const tillTenant = new Map<string, string>()
  const registerTill = async (tenant: string, shortcode: string) => {
    const r = await clients[tenant]!.post('/api/v1/payments/c2b/register', {
      shortcode,
      response_type: 'Completed',
    })
    expect(r.status).toBe(201)
    tillTenant.set(r.body.confirmation_url, tenant)
    return r.body.confirmation_url as string
  }

  it('counts a C2B payment once when the emailed PDF statement reporting it is imported later', async () => {
    // A statement ending now: Daraja confirms a payment within a day, in whole shillings.
    const end = new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 19)
    const made = await makeStatementPdf({
      pages: 1,
      password: '12345678',
      receiptPrefix: 'LC',
      end,
    })
    const done = made.rows.filter((r) => r.status === 'Completed')
    const row = done.find((r) => r.paidIn > 0 && r.paidIn % 100 === 0)!
    const at = new Date(Date.parse(`${row.time.replace(' ', 'T')}+03:00`)).toISOString()
    const url = await registerTill('cbfirst', '600201')
    await confirmC2b(url, row.receipt, row.paidIn / 100, at)
    await eventually(async () => (await rowsOf('cbfirst', row.receipt)).length === 1, 20_000)

    const res = await upload('cbfirst', made.bytes, 'statement.pdf', '12345678')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      accepted: done.length - 1,
      duplicates: 1,
      matched: 1,
      rejected: 0,
    })
    const latest = done[0]!.balance / 100
    const l = await ledgerOf('cbfirst', row.receipt, row.balance / 100, nairobiDay(at), latest)
    expect(l.rows).toHaveLength(1)
    expect(l.rows[0]).toMatchObject({ source: 'payment', amount: row.paidIn / 100 })
    expect(l.summary.total_transactions).toBe(done.length)
    expect(l.usage.transactions.used).toBe(done.length)
    const sameDay = done.filter((r) => r.time.slice(0, 10) === row.time.slice(0, 10))
    const inflow = sameDay.reduce((s, r) => s + r.paidIn, 0) / 100
    expect(l.daily.inflow).toBeCloseTo(inflow, 2)
  }, 60_000)

  it('still counts a receipt once when its second report arrives after a Free to Pro move', async () => {
    const operator = await p.login()
    await createTenants(p.gateway, operator, { id: 'mover', plan: 'free' })
    clients.mover = api(p.gateway, await p.login('owner@mover.test', 'mover-Owner-Passphrase-42'))
    const at = new Date(Date.now() - 3_600_000).toISOString()
    const imported = await upload(
      'mover',
      statementCsv([
        {
          receipt: 'MOVEAB0001',
          at,
          details: 'Merchant Payment from JANE',
          paidIn: 420,
          balance: 420,
        },
      ]),
      'mover.csv',
    )
    expect(imported.body).toMatchObject({ accepted: 1, duplicates: 0 })
    await eventually(async () => (await rowsOf('mover', 'MOVEAB0001')).length === 1, 20_000)
    const up = await clients.mover!.put('/api/v1/tenants/mover/upgrade', { plan: 'pro' })
    expect(up.status).toBe(200)
    expect(up.body).toMatchObject({ isolation: 'schema' })
    const url = await registerTill('mover', '600209')
    const liveReports = async () =>
      (await clients.mover!.get('/api/v1/analytics/reconciliation')).body.not_reported_live.count
    expect(await liveReports()).toBe(1)
    await confirmC2b(url, 'MOVEAB0001', 420, at)
    // The statement row counts as reported live once the C2B confirmation reached the ledger.
    await eventually(async () => (await liveReports()) === 0, 20_000, 'the C2B report merged')
    const summary = (await clients.mover!.get('/api/v1/analytics/summary')).body
    expect(summary).toMatchObject({ total_transactions: 1, total_in: 420 })
    expect(await rowsOf('mover', 'MOVEAB0001')).toHaveLength(1)
  }, 60_000)

  it('makes one transaction of a receipt reported by C2B and a statement at the same moment', async () => {
    const url = await registerTill('racing', '600202')
    const at = new Date().toISOString()
    const rows: Row[] = Array.from({ length: 8 }, (_, i) => ({
      receipt: `RACE00000${i}`,
      at,
      details: `Funds received from 2547***60${i} - JANE DOE`,
      paidIn: 100 + i,
      balance: 1_000 + i,
    }))
    const [answer] = await Promise.all([
      upload('racing', statementCsv(rows), 'race.csv'),
      ...rows.map((r) => confirmC2b(url, r.receipt, r.paidIn!, at)),
    ])
    expect(answer.status).toBe(201)
    expect(answer.body.accepted + answer.body.duplicates).toBe(rows.length)
    const total = rows.reduce((s, r) => s + r.paidIn!, 0)
    const c = clients.racing!
    await eventually(
      async () => {
        const list = (await c.get('/api/v1/analytics/transactions?limit=500')).body.data as any[]
        return list.length === rows.length && list.every((t) => t.balance !== null)
      },
      20_000,
      'every receipt once, enriched by the statement',
    )
    await eventually(
      async () => {
        const d = (
          await c.get(`/api/v1/cashflow/daily?from=${nairobiDay(at)}&to=${nairobiDay(at)}`)
        ).body.data[0]
        return Math.abs(d.inflow - total) < 0.001
      },
      20_000,
      'cashflow counting each receipt once',
    )
    const summary = (await c.get('/api/v1/analytics/summary')).body
    expect(summary).toMatchObject({ total_transactions: rows.length })
    expect(summary.total_in).toBeCloseTo(total, 2)
    const usage = await eventually(async () => {
      const m = (await c.get('/api/v1/billing/usage/racing')).body.metrics
      return m.statements.used === 1 ? m : null
    })
    expect(usage.transactions.used).toBe(rows.length)
  }, 60_000)

  /**
   * Two STK payments and a C2B one, then a statement that lacks the second payment, has a row no
   * channel reported and another amount for the C2B one: what the reconciliation tests read.
   */
  const reconcilable = async (tenant: string, shortcode: string, tag: string) => {
    const c = clients[tenant]!
    const receipts = { c2b: `RC${tag}C000001`, extra: `RC${tag}X000001` }
    const a = await settled(tenant, await stkPush(tenant, 500))
    const b = await settled(tenant, await stkPush(tenant, 300))
    const url = await registerTill(tenant, shortcode)
    const cAt = new Date(Date.parse(b.updated_at) + 2_000).toISOString()
    await confirmC2b(url, receipts.c2b, 250, cAt)
    const xAt = new Date(Date.parse(cAt) + 60_000).toISOString()
    const res = await upload(
      tenant,
      statementCsv([
        {
          receipt: a.mpesa_receipt_number,
          at: a.updated_at,
          details: 'Funds received',
          paidIn: 500,
          balance: 1_500,
        },
        {
          receipt: receipts.c2b,
          at: cAt,
          details: 'Merchant Payment from JANE',
          paidIn: 260,
          balance: 1_760,
        },
        {
          receipt: receipts.extra,
          at: xAt,
          details: 'Customer Withdrawal At Agent',
          withdrawn: 100,
          balance: 1_660,
        },
      ]),
      'recon.csv',
    )
    expect(res.body).toMatchObject({ accepted: 1, duplicates: 2, matched: 2 })
    await eventually(
      async () => {
        const list = (await c.get('/api/v1/analytics/transactions?limit=500')).body.data as any[]
        return list.length === 4 && list.filter((t) => t.balance !== null).length >= 3
      },
      20_000,
      'four ledger transactions, three enriched by the statement',
    )
    return { a, b, ...receipts }
  }

  it('reconciles a statement with a payment it lacks, a row no channel reported and an amount that disagrees', async () => {
    const c = clients.recon!
    const empty = await c.get('/api/v1/analytics/reconciliation')
    expect(empty.status).toBe(200)
    expect(empty.body).toMatchObject({ period: null, statement_rows: 0, balance: null })
    const { b, ...receipts } = await reconcilable('recon', '600203', 'A')
    const r = await c.get('/api/v1/analytics/reconciliation')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      statement_rows: 3,
      missing_from_statement: {
        count: 1,
        data: [
          {
            receipt_number: b.mpesa_receipt_number,
            source: 'payment',
            channel: 'stk',
            amount: 300,
          },
        ],
      },
      not_reported_live: {
        count: 1,
        data: [{ receipt_number: receipts.extra, amount: 100, direction: 'out' }],
      },
      amount_mismatches: {
        count: 1,
        data: [
          {
            receipt_number: receipts.c2b,
            amount: 260,
            reported: [{ source: 'payment', channel: 'c2b', amount: 250 }],
          },
        ],
      },
      balance: {
        opening: 1_000,
        statement_closing: 1_660,
        platform_running: 1_950,
        difference: 290,
      },
    })
    // The ledger keeps the first report's amount; the statement's is the reconciliation's to show.
    const summary = (await c.get('/api/v1/analytics/summary')).body
    expect(summary).toMatchObject({ total_transactions: 4, total_in: 1_050, total_out: 100 })
  }, 60_000)

  it('shows the same reconciliation on the dashboard page', async () => {
    const receipts = await reconcilable('reconpage', '600204', 'B')
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    })
    try {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } })
      await page.goto(`${p.gateway}/#/reconciliation`)
      await page.getByLabel('Email').fill('owner@reconpage.test')
      await page.getByLabel('Password').fill('reconpage-Owner-Passphrase-42')
      await page.getByRole('button', { name: 'Log in' }).click()
      await page.locator('#logout').waitFor()
      await page.getByRole('link', { name: 'Reconciliation' }).click()
      await page.locator('#reconciliation-period').waitFor()
      const cards = page.locator('#reconciliation .card')
      const value = (title: string) =>
        cards.filter({ hasText: title }).locator('.card-value').textContent()
      expect(await value('Missing from the statement')).toBe('1')
      expect(await value('Only in the statement')).toBe('1')
      expect(await value('Amounts that disagree')).toBe('1')
      expect(await value('Balance difference')).toBe('KES 290.00')
      const text = (await page.locator('#reconciliation').textContent()) ?? ''
      expect(text).toContain(receipts.extra)
      expect(text).toContain(receipts.c2b)
      await page.screenshot({
        path: join(import.meta.dir, '..', 'test-output', 'dashboard', 'reconciliation-1366.png'),
        fullPage: true,
      })
    } finally {
      await browser.close()
    }
  }, 60_000)
})
