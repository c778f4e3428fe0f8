/**
 * Makes a synthetic M-PESA statement PDF in the layout Safaricom emails: a header block, a summary
 * table, then the detailed table over as many pages as asked, Details wrapping onto further lines,
 * the page title, column header and page footer repeated on every page, encrypted with a password.
 * Every name and number is made up (a seeded generator); never a real person's statement.
 *
 *   bun scripts/make-statement-pdf.ts out.pdf [--pages 50] [--password 12345678] [--encrypt qpdf|jspdf|none]
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
  status: 'Completed' | 'Failed'
  /** Cents; exactly one of paidIn and withdrawn is set. */
  paidIn: number
  withdrawn: number
  balance: number
}

export interface MadeStatement {
  /** Newest first, as the statement prints them. */
  rows: StatementRow[]
  pages: number
  bytes: Uint8Array
}

export interface StatementOptions {
  pages?: number
  seed?: number
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

/** The synthetic history, oldest first: sales in, stock and bills out, some failed attempts. */
function rowsOf(count: number, seed: number, prefix: string, end: string): StatementRow[] {
  const rnd = random(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!
  let balance = 500_000
  let at = Date.parse(`${end}Z`) - count * 180 * 60_000
  const rows: StatementRow[] = []
  for (let i = 0; i < count; i++) {
    at += Math.floor(60 + rnd() * 240) * 60_000 + Math.floor(rnd() * 60) * 1000
    const receipt = `${prefix}${(i + 1)
      .toString(36)
      .toUpperCase()
      .padStart(10 - prefix.length, '0')}`
    const time = new Date(at).toISOString().slice(0, 19).replace('T', ' ')
    const kind = rnd()
    const amount = Math.round(50 + rnd() * 4000) * 100 + (rnd() < 0.3 ? 50 : 0)
    let details: string
    let paidIn = 0
    let withdrawn = 0
    if (kind < 0.45) {
      const who = pick(NAMES)
      details = `Funds received from 2547${String(10_000_000 + Math.floor(rnd() * 89_999_999))} - ${who}`
      paidIn = amount
    } else if (kind < 0.65) {
      details = `Merchant Payment to ${100_000 + Math.floor(rnd() * 899_999)} - ${pick(SHOPS)}`
      withdrawn = amount
    } else if (kind < 0.8) {
      details = `Pay Bill to ${pick(PAYBILLS)}`
      withdrawn = amount
    } else if (kind < 0.92) {
      details = `Customer Transfer to 07${Math.floor(rnd() * 10)}***${100 + Math.floor(rnd() * 899)} - ${pick(NAMES)}`
      withdrawn = Math.min(amount, 200_000)
    } else {
      details = 'Airtime Purchase'
      withdrawn = Math.round(10 + rnd() * 90) * 100
    }
    if (withdrawn > balance) {
      paidIn = withdrawn
      withdrawn = 0
      details = `Business Payment from 600100 - ACME DISTRIBUTORS LIMITED via API.`
    }
    const failed = rnd() < 0.04
    if (!failed) balance += paidIn - withdrawn
    rows.push({
      receipt,
      time,
      details,
      status: failed ? 'Failed' : 'Completed',
      paidIn,
      withdrawn,
      balance,
    })
  }
  return rows
}

// A4 in points; the table's columns (left x, or right x for amounts).
const PAGE_H = 842
const TOP = 40
const BOTTOM = 790
const SIZE = 8
const LEADING = 10
const COLS = {
  receipt: 30,
  time: 92,
  details: 180,
  status: 345,
  paidIn: 455,
  withdrawn: 510,
  balance: 565,
}
const DETAILS_WIDTH = 150

function header(doc: jsPDF, y: number): number {
  doc.setFont('helvetica', 'bold')
  doc.text('Receipt No.', COLS.receipt, y)
  doc.text('Completion Time', COLS.time, y)
  doc.text('Details', COLS.details, y)
  doc.text('Transaction Status', COLS.status, y)
  doc.text('Paid In', COLS.paidIn, y, { align: 'right' })
  doc.text('Withdrawn', COLS.withdrawn, y, { align: 'right' })
  doc.text('Balance', COLS.balance, y, { align: 'right' })
  doc.setFont('helvetica', 'normal')
  return y + LEADING + 4
}

function pageTop(doc: jsPDF): number {
  doc.setFontSize(11)
  doc.text('M-PESA STATEMENT', 297, TOP, { align: 'center' })
  doc.setFontSize(SIZE)
  return TOP + 20
}

function preamble(doc: jsPDF, rows: StatementRow[], end: string): number {
  let y = pageTop(doc)
  const first = rows.at(-1)!.time.slice(0, 10)
  for (const [k, v] of [
    ['Customer Name:', 'WANJIRU MUTHONI GENERAL STORES'],
    ['Mobile Number:', '0712345678'],
    ['Email Address:', 'duka@example.test'],
    ['Statement Period:', `${first} - ${end.slice(0, 10)}`],
    ['Request Date:', end.slice(0, 10)],
  ]) {
    doc.text(k!, 30, y)
    doc.text(v!, 120, y)
    y += LEADING + 2
  }
  y += 8
  doc.setFont('helvetica', 'bold')
  doc.text('SUMMARY', 30, y)
  y += LEADING + 2
  doc.text('TRANSACTION TYPE', 30, y)
  doc.text('PAID IN', 330, y, { align: 'right' })
  doc.text('PAID OUT', 430, y, { align: 'right' })
  doc.setFont('helvetica', 'normal')
  y += LEADING + 2
  const done = rows.filter((r) => r.status === 'Completed')
  const sum = (f: (r: StatementRow) => boolean, k: 'paidIn' | 'withdrawn') =>
    done.filter(f).reduce((s, r) => s + r[k], 0)
  const types: Array<[string, (r: StatementRow) => boolean]> = [
    ['SEND MONEY', (r) => r.details.startsWith('Customer Transfer')],
    ['RECEIVED MONEY', (r) => r.details.startsWith('Funds received')],
    ['LIPA NA M-PESA (PAYBILL)', (r) => r.details.startsWith('Pay Bill')],
    ['LIPA NA M-PESA (BUY GOODS)', (r) => r.details.startsWith('Merchant')],
    ['OTHERS', (r) => /^(Airtime|Business)/.test(r.details)],
    ['TOTAL:', () => true],
  ]
  for (const [name, f] of types) {
    doc.text(name, 30, y)
    doc.text(money(sum(f, 'paidIn')), 330, y, { align: 'right' })
    doc.text(money(sum(f, 'withdrawn')), 430, y, { align: 'right' })
    y += LEADING + 2
  }
  y += 10
  doc.setFont('helvetica', 'bold')
  doc.text('DETAILED STATEMENT', 30, y)
  doc.setFont('helvetica', 'normal')
  return y + LEADING + 6
}

function footer(doc: jsPDF, page: number, pages: number) {
  doc.setFontSize(7)
  doc.text(
    'Disclaimer: This record is produced for your information only. For the full terms and conditions of M-PESA visit the website.',
    30,
    PAGE_H - 30,
  )
  doc.text(`Page ${page} of ${pages}`, 297, PAGE_H - 18, { align: 'center' })
  doc.setFontSize(SIZE)
}

/** Lays the rows out; stops adding rows once `pages` pages are full. */
function layout(rows: StatementRow[], pages: number, end: string, rc4Password?: string) {
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
  doc.setFontSize(SIZE)
  let y = header(doc, preamble(doc, rows, end))
  let page = 1
  let used = 0
  for (const r of rows) {
    const lines = doc.splitTextToSize(r.details, DETAILS_WIDTH) as string[]
    if (y + lines.length * LEADING > BOTTOM) {
      if (page === pages) break
      doc.addPage()
      page++
      y = header(doc, pageTop(doc))
    }
    doc.text(r.receipt, COLS.receipt, y)
    doc.text(r.time, COLS.time, y)
    for (const [i, l] of lines.entries()) doc.text(l, COLS.details, y + i * LEADING)
    doc.text(r.status, COLS.status, y)
    if (r.paidIn) doc.text(money(r.paidIn), COLS.paidIn, y, { align: 'right' })
    if (r.withdrawn) doc.text(`-${money(r.withdrawn)}`, COLS.withdrawn, y, { align: 'right' })
    doc.text(money(r.balance), COLS.balance, y, { align: 'right' })
    y += lines.length * LEADING + 5
    used++
  }
  for (let p = 1; p <= page; p++) {
    doc.setPage(p)
    footer(doc, p, page)
  }
  return { doc, used, pages: page }
}

/** A synthetic statement PDF of `pages` full pages, encrypted when a password is given. */
export async function makeStatementPdf(opts: StatementOptions = {}): Promise<MadeStatement> {
  const pages = opts.pages ?? 3
  const end = opts.end ?? '2024-03-31T17:00:00'
  // Newest first, as Safaricom prints them; about 45 rows fit a page.
  const all = rowsOf(pages * 60, opts.seed ?? 7, opts.receiptPrefix ?? 'SC', end).reverse()
  const rc4 = opts.encrypt === 'jspdf' ? opts.password : undefined
  const { doc, used, pages: made } = layout(all, pages, end, rc4)
  const rows = all.slice(0, used)
  let bytes: Uint8Array = new Uint8Array(doc.output('arraybuffer'))
  if (opts.password && opts.encrypt !== 'jspdf') bytes = await qpdfEncrypt(bytes, opts.password)
  return { rows, pages: made, bytes }
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
