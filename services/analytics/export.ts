import { jsPDF } from 'jspdf'
import Papa from 'papaparse'
import { toMajor } from '../kernel/money.ts'
import type { CustomerView } from './customers.ts'
import type { Scope, Summary, TrendPoint } from './summary.ts'
import { type TransactionFilters, VIEW_FIELDS, whereOf } from './transactions.ts'

const PAGE = 2000

/** Papa's own rule for when a field needs quotes (BAD_DELIMITERS, the delimiter, edge spaces). */
const NEEDS_QUOTES = /[\r\n",\ufeff]|^ | $/

/**
 * CSV injection (OWASP): a spreadsheet runs a cell starting with = + - @ tab or CR (and, in some
 * locales, their full-width forms) as a formula, e.g. a counterparty named `=HYPERLINK(...)`.
 * Leading spaces are looked through because some importers trim them.
 */
const FORMULA_START = /^[ ]*[=+\-@\t\r\uff1d\uff0b\uff0d\uff20]/
/** A plain decimal number cannot be a formula: `-500.00` or `+254712345678` stay readable. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * A cell as it is safe to write: text that a spreadsheet would run as a formula gets a leading
 * single quote, which shows the text as typed. Numbers, and text that is only a number, are kept.
 */
export function neutraliseCell(v: unknown): unknown {
  return typeof v === 'string' && FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v
}

/**
 * One CSV line exactly as `Papa.unparse` writes it for a row without anything to quote, built
 * without Papa's per-field passes (2× faster over a million rows); null when Papa must do it.
 */
function plainLine(row: readonly unknown[]): string | null {
  let line = ''
  for (let i = 0; i < row.length; i++) {
    const v = neutraliseCell(row[i])
    if (typeof v === 'string' && NEEDS_QUOTES.test(v)) return null
    const text = v == null ? '' : String(v)
    line = i === 0 ? text : `${line},${text}`
  }
  return line
}

/**
 * A page of rows as CSV lines (CRLF, Papa's default), formula cells neutralised, Papa unparsing
 * the rows that need quoting.
 */
export function unparsePage(rows: readonly unknown[][]): string {
  let out = ''
  for (const r of rows)
    out += `${plainLine(r) ?? Papa.unparse([r.map(neutraliseCell)], { header: false })}\r\n`
  return out
}

const SELECT = `SELECT id, occurred_at, amount_cents, direction, counterparty_name, counterparty_phone,
  description, receipt_number, balance_cents, category, category_confidence, category_source, source,
  user_id FROM transactions`

/**
 * The filtered transactions as CSV, streamed: each pull reads one keyset page and unparses it, so
 * memory stays at one page whatever the row count. Columns are the read-back fields (DESIGN §11).
 */
export function exportCsv(scope: Scope, filters: TransactionFilters): ReadableStream<Uint8Array> {
  const { sql, args } = whereOf(scope, filters)
  const encoder = new TextEncoder()
  const first = scope.db.sqlite.query(
    `${SELECT} INDEXED BY transactions_time WHERE ${sql} ORDER BY occurred_at DESC, id DESC LIMIT ?`,
  )
  const next = scope.db.sqlite.query(
    `${SELECT} INDEXED BY transactions_time WHERE ${sql}
     AND (occurred_at, id) < (?, ?) ORDER BY occurred_at DESC, id DESC LIMIT ?`,
  )
  let after: { at: string; id: string } | null = null
  let started = false
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const rows = (
        after
          ? next.values(...(args as never[]), after.at, after.id, PAGE)
          : first.values(...(args as never[]), PAGE)
      ) as unknown[][]
      if (!started) {
        started = true
        controller.enqueue(encoder.encode(`${Papa.unparse([VIEW_FIELDS as never])}\r\n`))
      }
      if (rows.length === 0) {
        controller.close()
        return
      }
      const last = rows[rows.length - 1]!
      after = { at: last[1] as string, id: last[0] as string }
      for (const r of rows) {
        r[2] = toMajor(r[2] as number)
        if (r[8] !== null) r[8] = toMajor(r[8] as number)
      }
      controller.enqueue(encoder.encode(unparsePage(rows)))
      if (rows.length < PAGE) controller.close()
    },
  })
}

export interface ReportInput {
  tenantId: string
  generatedAt: string
  from: string | undefined
  to: string | undefined
  summary: Summary
  customers: CustomerView[]
  months: TrendPoint[]
  /** RFM segments are advanced analytics: the column is left out without the feature. */
  withSegments: boolean
}

const fmt = (n: number) => n.toFixed(2)

/** A one-page PDF report: summary numbers, top customers and a monthly in/out bar chart. */
export function exportPdf(input: ReportInput): ArrayBuffer {
  const doc = new jsPDF({ unit: 'pt', format: 'a4' })
  const left = 48
  let y = 56
  doc.setFont('helvetica', 'bold').setFontSize(18)
  doc.text('Mobile-money analytics report', left, y)
  doc.setFont('helvetica', 'normal').setFontSize(10)
  y += 18
  doc.text(`Tenant: ${input.tenantId}    Generated: ${input.generatedAt}`, left, y)
  y += 14
  doc.text(`Period: ${input.from ?? 'beginning'} to ${input.to ?? 'now'}    Currency: KES`, left, y)

  y += 28
  doc.setFont('helvetica', 'bold').setFontSize(13)
  doc.text('Summary', left, y)
  doc.setFont('helvetica', 'normal').setFontSize(11)
  const s = input.summary
  const lines: Array<[string, string]> = [
    ['Total transactions', String(s.total_transactions)],
    ['Total amount', fmt(s.total_amount)],
    ['Average transaction', fmt(s.average_transaction)],
    ['Active days', String(s.active_days)],
    ['Total in', fmt(s.total_in)],
    ['Total out', fmt(s.total_out)],
    ['Net', fmt(s.net)],
  ]
  for (const [label, value] of lines) {
    y += 16
    doc.text(`${label}: ${value}`, left, y)
  }

  y += 30
  doc.setFont('helvetica', 'bold').setFontSize(13)
  doc.text('Top customers', left, y)
  doc.setFontSize(10)
  y += 16
  const cols = [left, left + 190, left + 250, left + 340, left + 430]
  const heads = [
    'Customer',
    'Count',
    'Total',
    'Last seen',
    ...(input.withSegments ? ['Segment'] : []),
  ]
  for (const [i, h] of heads.entries()) {
    doc.text(h, cols[i]!, y)
  }
  doc.setFont('helvetica', 'normal')
  for (const c of input.customers.slice(0, 10)) {
    y += 14
    doc.text(c.counterparty.slice(0, 32), cols[0]!, y)
    doc.text(String(c.count), cols[1]!, y)
    doc.text(fmt(c.total), cols[2]!, y)
    doc.text(c.last_seen.slice(0, 10), cols[3]!, y)
    if (input.withSegments) doc.text(c.segment ?? '-', cols[4]!, y)
  }
  if (input.customers.length === 0) {
    y += 14
    doc.text('No customers in this period.', left, y)
  }

  y += 34
  drawMonthlyChart(doc, input.months.slice(-12), left, y, 500, 220)
  return doc.output('arraybuffer')
}

function drawMonthlyChart(
  doc: jsPDF,
  months: TrendPoint[],
  x: number,
  y: number,
  width: number,
  height: number,
): void {
  doc.setFont('helvetica', 'bold').setFontSize(13).setTextColor(0)
  doc.text('Monthly money in and out', x, y)
  const top = y + 24
  const plotH = height - 60
  const base = top + plotH
  const max = Math.max(1, ...months.flatMap((m) => [m.total_in, m.total_out]))
  doc.setDrawColor(120).setLineWidth(0.8)
  doc.line(x + 40, top, x + 40, base)
  doc.line(x + 40, base, x + width, base)
  doc.setFont('helvetica', 'normal').setFontSize(8)
  for (const f of [0, 0.5, 1]) {
    const ly = base - f * plotH
    doc.text(fmt(max * f), x + 36, ly + 3, { align: 'right' })
  }
  const slot = (width - 50) / Math.max(1, months.length)
  const bar = Math.min(18, slot / 2.5)
  months.forEach((m, i) => {
    const sx = x + 46 + i * slot
    const hIn = (m.total_in / max) * plotH
    const hOut = (m.total_out / max) * plotH
    doc.setFillColor(46, 139, 87).rect(sx, base - hIn, bar, hIn, 'F')
    doc.setFillColor(205, 92, 92).rect(sx + bar + 2, base - hOut, bar, hOut, 'F')
    doc.setTextColor(60).text(m.period, sx, base + 12)
  })
  const ly = base + 30
  doc.setFillColor(46, 139, 87).rect(x + 46, ly - 8, 10, 10, 'F')
  doc.setTextColor(0).text('In', x + 60, ly)
  doc.setFillColor(205, 92, 92).rect(x + 90, ly - 8, 10, 10, 'F')
  doc.text('Out', x + 104, ly)
  if (months.length === 0) doc.text('No transactions in this period.', x + 60, top + plotH / 2)
}
