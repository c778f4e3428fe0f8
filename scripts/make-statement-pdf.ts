/**
 * Makes a synthetic M-PESA statement PDF in each layout real statements come in (learnt from real
 * public files, docs/statement-layouts.md):
 * - `personal`: the emailed "M-PESA STATEMENT" (2021–25): preamble, SUMMARY by type with a TOTAL of
 *   every row (cancelled ones too), DETAILED STATEMENT newest first, Withdrawn negative, the empty
 *   amount column empty, running Balance, the disclaimer and verification-code footer on each page;
 * - `app-2025`: the app's "MPESA FULL STATEMENT": header cells wrapped over two lines, COMPLETED in
 *   capitals, `0.00` in the unused amount column, Withdrawn positive, summary by transaction type;
 * - `no-balance`: the personal layout re-rendered without its Balance column;
 * - `other-tool`: another tool's rendering, a two-line "Transaction Status" header cell, opening and
 *   closing balances above the table.
 * Details wrap onto further lines; with `legs`, a Fuliza-funded payment is its charge, the payment
 * and "OverDraft of Credit Party" under one receipt, and money received while Fuliza is owed is
 * followed by "OD Loan Repayment" in the same second; with `breakRows`, a row's Details run over
 * the page break. Every name and number is made up (a seeded generator); never a real statement.
 *
 *   bun scripts/make-statement-pdf.ts out.pdf [--pages 50] [--layout personal|app-2025|no-balance|other-tool]
 *     [--legs] [--password 12345678] [--encrypt qpdf|jspdf|none]
 *
 * Tests and the benchmark import `makeStatementPdf` and get the rows back to check against.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jsPDF } from 'jspdf'

export interface StatementRow {
  receipt: string
  /** Local wall-clock time as printed: `2024-03-31 17:05:09`. */
  time: string
  details: string
  status: 'Completed' | 'Failed' | 'Cancelled'
  /** Cents; exactly one of paidIn and withdrawn is set. */
  paidIn: number
  withdrawn: number
  /** The balance after the row (printed unless the layout has no Balance column). */
  balance: number
}

export type StatementLayoutId = 'personal' | 'app-2025' | 'no-balance' | 'other-tool'

export interface MadeStatement {
  /** Newest first, as the statement prints them (without `omitted`). */
  rows: StatementRow[]
  pages: number
  bytes: Uint8Array
  layout: StatementLayoutId
  /** What the SUMMARY's TOTAL (or the stated totals) says: every row laid out, omitted ones too. */
  totals: { paidIn: number; paidOut: number; opening: number; closing: number }
  /** Rows left out of the detailed table (`omit`), newest first, though the totals count them. */
  omitted: StatementRow[]
  /** Receipts of rows whose Details ran over a page break, and of receipts whose rows did. */
  acrossPages: { details: string[]; receipts: string[] }
}

export interface StatementOptions {
  pages?: number
  seed?: number
  layout?: StatementLayoutId
  /** Fuliza groups and charges sharing their payment's receipt. */
  legs?: boolean
  /** Let a row's wrapped Details run over the page break (the rest under the next page's header). */
  breakRows?: boolean
  /** Set a row's receipt, time and amounts in the middle of its Details instead of at the top. */
  valign?: 'top' | 'middle'
  /** Indexes (newest first) of rows to leave out of the table, as a doctored statement would. */
  omit?: number[]
  /** The user password (Safaricom: the ID number); empty or absent leaves it unencrypted. */
  password?: string
  /** qpdf: AES-256 (`qpdf --encrypt u o 256`); jspdf: jsPDF's own RC4. */
  encrypt?: 'qpdf' | 'jspdf'
  /** First letters of every receipt, so two statements do not share receipts. */
  receiptPrefix?: string
  /** Last completion time (the statement's newest row). */
  end?: string
}

const NAMES = ['PETER OTIENO', 'MARY WANJIKU', 'JOHN KAMAU', 'GRACE AKINYI', 'SAMUEL KIPROTICH']
const SHOPS = [
  'NAIVAS SUPERMARKET KAREN BRANCH NAIROBI',
  'SHELL KAREN SERVICE STATION',
  'TUSKYS WHOLESALE DEPOT',
]
const PAYBILLS = ['888880 - KPLC PREPAID Acc. 54321678', '247247 - EQUITY PAYBILL Acc. RENT']

function random(seed: number) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
}

const money = (cents: number) =>
  (cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })

/**
 * The synthetic history, oldest first: sales in, stock and bills out, some failed attempts; with
 * `legs`, charges and Fuliza draws under their payment's receipt and repayments when money comes in.
 */
function rowsOf(count: number, seed: number, prefix: string, end: string, legs: boolean) {
  const rnd = random(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!
  let balance = legs ? 20_000 : 500_000
  let owed = 0
  let at = Date.parse(`${end}Z`) - count * 180 * 60_000
  let n = 0
  const rows: StatementRow[] = []
  const receiptOf = () =>
    `${prefix}${(++n)
      .toString(36)
      .toUpperCase()
      .padStart(10 - prefix.length, '0')}`
  while (rows.length < count) {
    at += Math.floor(60 + rnd() * 240) * 60_000 + Math.floor(rnd() * 60) * 1000
    const receipt = receiptOf()
    const time = new Date(at).toISOString().slice(0, 19).replace('T', ' ')
    const row = (details: string, paidIn: number, withdrawn: number, status = 'Completed') => {
      if (status === 'Completed') balance += paidIn - withdrawn
      rows.push({
        receipt,
        time,
        details,
        status: status as StatementRow['status'],
        paidIn,
        withdrawn,
        balance,
      })
    }
    const kind = rnd()
    const amount = Math.round(50 + rnd() * 4000) * 100 + (rnd() < 0.3 ? 50 : 0)
    if (rnd() < 0.04) {
      row(`Pay Bill to ${pick(PAYBILLS)}`, 0, amount, legs && rnd() < 0.5 ? 'Cancelled' : 'Failed')
      continue
    }
    if (kind < 0.45) {
      const who = pick(NAMES)
      const from = `Funds received from 2547${String(10_000_000 + Math.floor(rnd() * 89_999_999))} - ${who}`
      row(from, legs ? Math.round(amount * 1.1) : amount, 0)
      if (legs && owed > 0) {
        const repaid = Math.min(owed, balance)
        owed -= repaid
        // The automatic repayment: its own receipt, the same second as the money that paid it.
        const r2 = receiptOf()
        balance -= repaid
        rows.push({
          receipt: r2,
          time,
          details: 'OD Loan Repayment to 232323 - M-PESA Overdraw',
          status: 'Completed',
          paidIn: 0,
          withdrawn: repaid,
          balance,
        })
      }
      continue
    }
    let details: string
    let charge = 0
    let chargeText = ''
    let fuliza = ''
    if (kind < 0.65) {
      details = `Merchant Payment to ${100_000 + Math.floor(rnd() * 899_999)} - ${pick(SHOPS)}`
      fuliza = details.replace('Merchant Payment to', 'Merchant Payment Fuliza M-Pesa to')
    } else if (kind < 0.8) {
      details = `Pay Bill Online to ${pick(PAYBILLS)}`
      fuliza = details.replace('Pay Bill Online to', 'Pay Bill Online Fuliza M-Pesa to')
      charge = 2300
      chargeText = 'Pay Bill Charge'
    } else if (kind < 0.92) {
      const to = `- 07******${100 + Math.floor(rnd() * 899)} ${pick(NAMES)}`
      details = `Customer Transfer to ${to}`
      fuliza = `Customer Transfer Fuliza MPesa to ${to}`
      charge = 1300
      chargeText = 'Customer Transfer of Funds Charge'
    } else {
      details = 'Airtime Purchase'
      fuliza = 'Airtime Purchase with Fuliza'
    }
    const out = details === 'Airtime Purchase' ? Math.round(10 + rnd() * 90) * 100 : amount
    if (!legs) {
      if (out > balance)
        row('Business Payment from 600100 - ACME DISTRIBUTORS LIMITED via API.', out, 0)
      else row(details, 0, out)
      continue
    }
    // Booked payment, charge, draw; printed (newest first) charge, payment, draw.
    const need = out + charge - balance
    if (need > 0) {
      owed += need
      row('OverDraft of Credit Party', need, 0)
      row(fuliza, 0, out)
    } else row(details, 0, out)
    if (charge) row(chargeText, 0, charge)
  }
  return rows.slice(0, count)
}

/** How one layout prints: its columns, header labels (one string a line), status and amounts. */
interface Style {
  font: 'helvetica' | 'times'
  title: string
  columns: Array<{
    key: 'receipt' | 'time' | 'details' | 'status' | 'paidIn' | 'withdrawn' | 'balance'
    label: string[]
    x: number
    align?: 'right'
  }>
  detailsWidth: number
  status: (s: StatementRow['status']) => string
  /** The text of an amount cell: '' for none. */
  amount: (cents: number, column: 'paidIn' | 'withdrawn') => string
  preamble: (
    doc: jsPDF,
    y: number,
    rows: StatementRow[],
    t: MadeStatement['totals'],
    end: string,
  ) => number
  footer: (doc: jsPDF, page: number, pages: number) => void
}

// A4 in points.
const PAGE_H = 842
const TOP = 40
const BOTTOM = 760
const SIZE = 8
const LEADING = 10
const ROW_PAD = 5

const PERSONAL_COLUMNS: Style['columns'] = [
  { key: 'receipt', label: ['Receipt No.'], x: 30 },
  { key: 'time', label: ['Completion Time'], x: 92 },
  { key: 'details', label: ['Details'], x: 180 },
  { key: 'status', label: ['Transaction Status'], x: 345 },
  { key: 'paidIn', label: ['Paid In'], x: 455, align: 'right' },
  { key: 'withdrawn', label: ['Withdrawn'], x: 510, align: 'right' },
  { key: 'balance', label: ['Balance'], x: 565, align: 'right' },
]

function lines(doc: jsPDF, x: number, y: number, pairs: Array<[string, string]>, gap = 90): number {
  for (const [k, v] of pairs) {
    doc.text(k, x, y)
    doc.text(v, x + gap, y)
    y += LEADING + 2
  }
  return y
}

/** A SUMMARY table: rows by type, then the TOTAL of every row (cancelled ones too). */
function summary(
  doc: jsPDF,
  y: number,
  rows: StatementRow[],
  types: Array<[string, (r: StatementRow) => boolean]>,
  t: MadeStatement['totals'],
  colon: boolean,
): number {
  doc.setFont(doc.getFont().fontName, 'bold')
  doc.text('SUMMARY', 30, y)
  y += LEADING + 2
  doc.text('TRANSACTION TYPE', 30, y)
  doc.text('PAID IN', 330, y, { align: 'right' })
  doc.text('PAID OUT', 430, y, { align: 'right' })
  doc.setFont(doc.getFont().fontName, 'normal')
  y += LEADING + 2
  const left = new Set(rows)
  const put = (name: string, paidIn: number, paidOut: number) => {
    doc.text(colon ? `${name}:` : name, 30, y)
    doc.text(money(paidIn), 330, y, { align: 'right' })
    doc.text(money(paidOut), 430, y, { align: 'right' })
    y += LEADING + 2
  }
  for (const [name, f] of types) {
    const mine = [...left].filter(f)
    for (const r of mine) left.delete(r)
    put(name, sum(mine, 'paidIn'), sum(mine, 'withdrawn'))
  }
  put('TOTAL', t.paidIn, t.paidOut)
  return y + 10
}

const sum = (rows: StatementRow[], k: 'paidIn' | 'withdrawn') => rows.reduce((s, r) => s + r[k], 0)
const starts =
  (...words: string[]) =>
  (r: StatementRow) =>
    words.some((w) => r.details.startsWith(w))

function personalPreamble(
  doc: jsPDF,
  y: number,
  rows: StatementRow[],
  t: MadeStatement['totals'],
  end: string,
) {
  const first = rows.at(-1)?.time.slice(0, 10) ?? end.slice(0, 10)
  y = lines(doc, 30, y, [
    ['Customer Name:', 'WANJIRU MUTHONI GENERAL STORES'],
    ['Mobile Number:', '0712345678'],
    ['Email Address:', 'duka@example.test'],
    ['Statement Period:', `${first} - ${end.slice(0, 10)}`],
    ['Request Date:', end.slice(0, 10)],
  ])
  y = summary(
    doc,
    y + 8,
    rows,
    [
      ['SEND MONEY', starts('Customer Transfer')],
      ['RECEIVED MONEY', starts('Funds received')],
      ['AGENT DEPOSIT', starts('Deposit of Funds')],
      ['AGENT WITHDRAWAL', starts('Customer Withdrawal')],
      ['LIPA NA M-PESA (PAYBILL)', starts('Pay Bill')],
      ['LIPA NA M-PESA (BUY GOODS)', starts('Merchant')],
      ['OTHERS', () => true],
    ],
    t,
    true,
  )
  doc.setFont(doc.getFont().fontName, 'bold')
  doc.text('DETAILED STATEMENT', 30, y)
  doc.setFont(doc.getFont().fontName, 'normal')
  return y + LEADING + 6
}

function personalFooter(doc: jsPDF, page: number, pages: number) {
  doc.setFontSize(7)
  let y = PAGE_H - 70
  for (const l of [
    'Disclaimer: Any personal information shared with you should be handled in accordance with the Data Protection Act and only used for the purpose',
    'for which it was provided.',
    'Statement Verification Code To verify the validity of this M-PESA statement dial *334#, select My account and follow the',
    'prompts to enter the code.',
  ]) {
    doc.text(l, 30, y)
    y += 9
  }
  doc.text('QX7KM2PA', 30, y)
  doc.text(
    'For self-help dial *334# | Web: www.example.test | Terms and conditions apply',
    30,
    y + 9,
  )
  doc.text(`Page ${page} of ${pages}`, 297, PAGE_H - 14, { align: 'center' })
  doc.setFontSize(SIZE)
}

const STYLES: Record<StatementLayoutId, Style> = {
  personal: {
    font: 'helvetica',
    title: 'M-PESA STATEMENT',
    columns: PERSONAL_COLUMNS,
    detailsWidth: 150,
    status: (s) => s,
    amount: (c, k) => (c ? (k === 'withdrawn' ? `-${money(c)}` : money(c)) : ''),
    preamble: personalPreamble,
    footer: personalFooter,
  },
  'no-balance': {
    font: 'helvetica',
    title: 'M-PESA STATEMENT',
    columns: PERSONAL_COLUMNS.filter((c) => c.key !== 'balance'),
    detailsWidth: 150,
    status: (s) => s,
    amount: (c, k) => (c ? (k === 'withdrawn' ? `-${money(c)}` : money(c)) : ''),
    preamble: personalPreamble,
    footer: personalFooter,
  },
  'app-2025': {
    font: 'helvetica',
    title: 'MPESA FULL STATEMENT',
    columns: [
      { key: 'receipt', label: ['Receipt', 'No.'], x: 30 },
      { key: 'time', label: ['Completion', 'Time'], x: 85 },
      { key: 'details', label: ['Details'], x: 165 },
      { key: 'status', label: ['Transaction', 'Status'], x: 330 },
      { key: 'paidIn', label: ['Paid In'], x: 440, align: 'right' },
      { key: 'withdrawn', label: ['Withdrawn'], x: 500, align: 'right' },
      { key: 'balance', label: ['Balance'], x: 565, align: 'right' },
    ],
    detailsWidth: 150,
    status: (s) => s.toUpperCase(),
    amount: (c) => money(c),
    preamble: (doc, y, rows, t, end) => {
      y = lines(doc, 30, y, [
        ['Customer Name:', 'JANE WANJIKU KAMAU'],
        ['Mobile Number:', '254712000001'],
        ['Date of Statement:', end.slice(0, 10)],
        ['Statement Period:', `${rows.at(-1)?.time.slice(0, 10)} - ${end.slice(0, 10)}`],
      ])
      y = summary(
        doc,
        y + 8,
        rows,
        [
          ['Cash Out', starts('Customer Withdrawal')],
          ['Send Money', starts('Customer Transfer', 'Funds received')],
          ['B2C Payment', starts('Business Payment')],
          ['Pay Bill', starts('Pay Bill')],
          ['OD Payment Transfer', starts('OverDraft')],
          ['ODRepayment', starts('OD Loan')],
          ['Customer Merchant Payment', starts('Merchant')],
          ['Customer Airtime Purchase', starts('Airtime')],
          ['Customer Bundle Purchase', () => true],
        ],
        t,
        false,
      )
      return y + 6
    },
    footer: (doc, page, pages) => {
      doc.setFontSize(7)
      doc.text(
        'Disclaimer: This statement is produced for your information only. Terms and conditions apply.',
        30,
        PAGE_H - 40,
      )
      doc.text(`Page ${page} of ${pages}`, 297, PAGE_H - 20, { align: 'center' })
      doc.setFontSize(SIZE)
    },
  },
  'other-tool': {
    font: 'times',
    title: 'Mobile Money Statement',
    columns: [
      { key: 'receipt', label: ['Receipt No.'], x: 25 },
      { key: 'time', label: ['Completion Time'], x: 85 },
      { key: 'details', label: ['Details'], x: 170 },
      { key: 'status', label: ['Transaction', 'Status'], x: 340 },
      { key: 'paidIn', label: ['Paid In'], x: 450, align: 'right' },
      { key: 'withdrawn', label: ['Withdrawn'], x: 505, align: 'right' },
      { key: 'balance', label: ['Balance'], x: 570, align: 'right' },
    ],
    detailsWidth: 155,
    status: (s) => s,
    amount: (c, k) => (c ? (k === 'withdrawn' ? `-${money(c)}` : money(c)) : ''),
    preamble: (doc, y, _rows, t) =>
      lines(doc, 30, y, [
        ['Opening Balance:', money(t.opening)],
        ['Closing Balance:', money(t.closing)],
      ]) + 10,
    footer: (doc, page, pages) => {
      doc.setFontSize(7)
      doc.text(`Generated on 2024-04-01 by statement-tool | ${page}/${pages}`, 30, PAGE_H - 20)
      doc.setFontSize(SIZE)
    },
  },
}

function header(doc: jsPDF, style: Style, y: number): number {
  doc.setFont(style.font, 'bold')
  const depth = Math.max(...style.columns.map((c) => c.label.length))
  for (const c of style.columns) {
    for (const [i, l] of c.label.entries()) {
      doc.text(l, c.x, y + i * LEADING, c.align ? { align: c.align } : {})
    }
  }
  doc.setFont(style.font, 'normal')
  return y + (depth - 1) * LEADING + LEADING + 4
}

function pageTop(doc: jsPDF, style: Style): number {
  doc.setFontSize(11)
  doc.text(style.title, 297, TOP, { align: 'center' })
  doc.setFontSize(SIZE)
  return TOP + 20
}

/** Lays the rows out; stops adding rows once `pages` pages are full. */
function layout(
  rows: StatementRow[],
  opts: {
    pages: number
    end: string
    style: Style
    totals: MadeStatement['totals']
    breakRows: boolean
    middle: boolean
    omit: Set<number>
  },
  rc4Password?: string,
) {
  const { style } = opts
  const doc = new jsPDF({
    unit: 'pt',
    format: 'a4',
    compress: true,
    ...(rc4Password
      ? {
          encryption: {
            userPassword: rc4Password,
            ownerPassword: `${rc4Password}-owner`,
            userPermissions: ['print' as const],
          },
        }
      : {}),
  })
  doc.setFont(style.font, 'normal')
  doc.setFontSize(SIZE)
  let y = header(doc, style, style.preamble(doc, pageTop(doc, style), rows, opts.totals, opts.end))
  let page = 1
  let used = 0
  const across = { details: [] as string[], receipts: [] as string[] }
  const pageOf = new Map<string, number>()
  const newPage = () => {
    doc.addPage()
    page++
    y = header(doc, style, pageTop(doc, style))
  }
  const cell = (c: Style['columns'][number], text: string, at: number) => {
    if (text) doc.text(text, c.x, at, c.align ? { align: c.align } : {})
  }
  for (const [i, r] of rows.entries()) {
    const details = doc.splitTextToSize(r.details, style.detailsWidth) as string[]
    if (y + details.length * LEADING > BOTTOM) {
      const fit = Math.floor((BOTTOM - y) / LEADING)
      const split = opts.breakRows && !opts.middle && page < opts.pages && fit >= 1
      if (!(split && fit < details.length)) {
        if (page === opts.pages) break
        newPage()
      }
    }
    used++
    if (opts.omit.has(i)) continue
    const seen = pageOf.get(r.receipt)
    if (seen !== undefined && seen !== page) across.receipts.push(r.receipt)
    pageOf.set(r.receipt, page)
    const anchorY = opts.middle ? y + ((details.length - 1) * LEADING) / 2 : y
    for (const c of style.columns) {
      if (c.key === 'details') continue
      const text =
        c.key === 'paidIn' || c.key === 'withdrawn'
          ? style.amount(r[c.key], c.key)
          : c.key === 'status'
            ? style.status(r.status)
            : c.key === 'balance'
              ? money(r.balance)
              : r[c.key]
      cell(c, text, anchorY)
    }
    const dx = style.columns.find((c) => c.key === 'details')!
    for (const l of details) {
      if (y > BOTTOM) {
        // The rest of this row's Details, under the next page's header.
        newPage()
        across.details.push(r.receipt)
      }
      doc.text(l, dx.x, y)
      y += LEADING
    }
    y += ROW_PAD
  }
  for (let p = 1; p <= page; p++) {
    doc.setPage(p)
    style.footer(doc, p, page)
  }
  return { doc, used, pages: page, across }
}

/** A synthetic statement PDF of `pages` full pages, encrypted when a password is given. */
export async function makeStatementPdf(opts: StatementOptions = {}): Promise<MadeStatement> {
  const pages = opts.pages ?? 3
  const end = opts.end ?? '2024-03-31T17:00:00'
  const layoutId = opts.layout ?? 'personal'
  const style = STYLES[layoutId]
  // Newest first, as Safaricom prints them; about 45 rows fit a page.
  const all = rowsOf(
    pages * 60,
    opts.seed ?? 7,
    opts.receiptPrefix ?? 'SC',
    end,
    opts.legs === true,
  ).reverse()
  const rc4 = opts.encrypt === 'jspdf' ? opts.password : undefined
  const settings = {
    pages,
    end,
    style,
    breakRows: opts.breakRows === true,
    middle: opts.valign === 'middle',
    omit: new Set(opts.omit ?? []),
  }
  // Once to learn which rows fit, again with the summary of exactly those rows.
  const fit = layout(all, { ...settings, totals: totalsOf(all) })
  const laid = all.slice(0, fit.used)
  const totals = totalsOf(laid)
  const { doc, pages: made, across } = layout(laid, { ...settings, totals }, rc4)
  let bytes: Uint8Array = new Uint8Array(doc.output('arraybuffer'))
  if (opts.password && opts.encrypt !== 'jspdf') bytes = await qpdfEncrypt(bytes, opts.password)
  return {
    rows: laid.filter((_, i) => !settings.omit.has(i)),
    pages: made,
    bytes,
    layout: layoutId,
    totals,
    omitted: laid.filter((_, i) => settings.omit.has(i)),
    acrossPages: across,
  }
}

/** The TOTAL a statement prints: every row, cancelled and failed ones too; balances around them. */
function totalsOf(rows: StatementRow[]): MadeStatement['totals'] {
  const oldest = rows.at(-1)
  const moved = oldest && oldest.status === 'Completed' ? oldest.paidIn - oldest.withdrawn : 0
  return {
    paidIn: sum(rows, 'paidIn'),
    paidOut: sum(rows, 'withdrawn'),
    opening: oldest ? oldest.balance - moved : 0,
    closing: rows[0]?.balance ?? 0,
  }
}

/** qpdf reads and writes files (it needs to seek), so the PDF goes through a temporary folder. */
async function qpdfEncrypt(bytes: Uint8Array, password: string): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-statement-'))
  try {
    await Bun.write(join(dir, 'plain.pdf'), bytes)
    const proc = Bun.spawn(
      ['qpdf', '--encrypt', password, `${password}-owner`, '256', '--', 'plain.pdf', 'locked.pdf'],
      { cwd: dir, stdout: 'ignore', stderr: 'pipe' },
    )
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
    if (code !== 0) {
      throw new Error(`qpdf failed (${code}): ${err} (is the Debian package qpdf installed?)`)
    }
    return await Bun.file(join(dir, 'locked.pdf')).bytes()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A PDF that is not a statement (an invoice), for the refusal path. */
export function makeOtherPdf(): Uint8Array {
  const doc = new jsPDF({ unit: 'pt', format: 'a4' })
  doc.text('INVOICE 2024-001', 40, 60)
  doc.text('Item', 40, 100)
  doc.text('Qty', 300, 100)
  doc.text('Price', 400, 100)
  doc.text('Sukuma wiki', 40, 120)
  doc.text('10', 300, 120)
  doc.text('500.00', 400, 120)
  return new Uint8Array(doc.output('arraybuffer'))
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`)
    return i >= 0 ? args.splice(i, 2)[1] : undefined
  }
  const pages = Number(flag('pages') ?? 3)
  const password = flag('password')
  const encrypt = flag('encrypt') as StatementOptions['encrypt'] | 'none' | undefined
  const out = args[0]
  if (!out) {
    console.error(
      'usage: bun scripts/make-statement-pdf.ts OUT.pdf [--pages N] [--password PW] [--encrypt qpdf|jspdf|none]',
    )
    process.exit(2)
  }
  const made = await makeStatementPdf({
    pages,
    password: encrypt === 'none' ? undefined : password,
    encrypt: encrypt === 'none' ? undefined : encrypt,
  })
  await Bun.write(out, made.bytes)
  console.log(`${out}: ${made.pages} pages, ${made.rows.length} rows, ${made.bytes.length} bytes`)
}
