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
 * Cells that need neither quotes nor a formula guard: no first character that could start a
 * formula (a leading space included, since FORMULA_START looks through spaces) and nothing
 * NEEDS_QUOTES looks for. One test instead of two for the common cell; a match only means the
 * careful path decides.
 */
const MAYBE_SPECIAL = /^[ =+\-@\t\r\uff1d\uff0b\uff0d\uff20]|[\r\n",\ufeff]| $/

/**
 * One CSV line exactly as `Papa.unparse` writes it for a row without anything to quote, built
 * without Papa's per-field passes (2× faster over a million rows); null when Papa must do it.
 */
function plainLine(row: readonly unknown[]): string | null {
  let line = ''
  for (let i = 0; i < row.length; i++) {
    let v = row[i]
    if (typeof v === 'string') {
      if (MAYBE_SPECIAL.test(v)) {
        v = neutraliseCell(v)
        if (typeof v === 'string' && NEEDS_QUOTES.test(v)) return null
      }
    } else if (v == null) v = ''
    line = i === 0 ? `${v}` : `${line},${v}`
  }
  return line
}

/**
 * A page of rows as CSV lines (CRLF, Papa's default), formula cells neutralised, Papa unparsing
 * the rows that need quoting. Each line is one flat string joined once per page: a page-long
 * chain of concatenations made encoding the page cost more than building it.
 */
export function unparsePage(rows: readonly unknown[][]): string {
  const lines: string[] = []
  for (const r of rows)
    lines.push(plainLine(r) ?? Papa.unparse([r.map(neutraliseCell)], { header: false }))
  lines.push('')
  return lines.join('\r\n')
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
  /** The request's filters, stated on the report; the top list was read with them. */
  filters: ReportFilters
  summary: Summary
  customers: CustomerView[]
  months: TrendPoint[]
  /** RFM segments are advanced analytics: the column is left out without the feature. */
  withSegments: boolean
}

export interface ReportFilters {
  direction?: 'in' | 'out' | undefined
  category?: string | undefined
  scope?: 'me' | 'tenant' | undefined
  min_amount?: number | undefined
  max_amount?: number | undefined
  phone?: string | undefined
  q?: string | undefined
}

const grouped = new Intl.NumberFormat('en-KE', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
})
/** The dashboard's one money format: `KES 1,234.00`, en-KE grouping, the sign first. */
export const money = (n: number) => `KES ${n < 0 ? '-' : ''}${grouped.format(Math.abs(n))}`
const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')
/** `2026-11-22` or an ISO time as people write the day: `22 Nov 2026`. */
export const dayText = (s: string) =>
  `${Number(s.slice(8, 10))} ${MONTHS[Number(s.slice(5, 7)) - 1]} ${s.slice(0, 4)}`
/** `2026-11` as `Nov 2026`. */
const monthText = (s: string) =>
  /^\d{4}-\d{2}$/.test(s) ? `${MONTHS[Number(s.slice(5, 7)) - 1]} ${s.slice(0, 4)}` : s

/** What the report covers, in words: the filters it applied and those only the CSV applies. */
export function filterLines(input: Pick<ReportInput, 'from' | 'to' | 'filters'>): string[] {
  const f = input.filters
  const applied = [
    `Period: ${input.from ? dayText(input.from) : 'from the first transaction'} to ${input.to ? dayText(input.to) : 'today'}`,
    f.direction
      ? `Direction: ${f.direction === 'in' ? 'money in' : 'money out'}`
      : 'Direction: in and out',
    f.category ? `Category: ${f.category}` : 'Category: all',
    f.scope === 'me' ? 'Transactions: mine only' : 'Transactions: the whole business',
  ]
  const csvOnly = [
    f.min_amount !== undefined ? `amount from ${money(f.min_amount)}` : null,
    f.max_amount !== undefined ? `amount up to ${money(f.max_amount)}` : null,
    f.phone ? `phone ${f.phone}` : null,
    f.q ? `text "${f.q}"` : null,
  ].filter((x): x is string => x !== null)
  return [
    applied.join('  ·  '),
    ...(csvOnly.length ? [`Not applied here (CSV export only): ${csvOnly.join(', ')}`] : []),
  ]
}

/** A one-page PDF report: its filters, summary numbers, top counterparties and a monthly chart. */
export function exportPdf(input: ReportInput): ArrayBuffer {
  const doc = new jsPDF({ unit: 'pt', format: 'a4' })
  const left = 48
  let y = 56
  doc.setFont('helvetica', 'bold').setFontSize(18)
  doc.text('Mobile-money analytics report', left, y)
  doc.setFont('helvetica', 'normal').setFontSize(10)
  y += 18
  doc.text(`Tenant: ${input.tenantId}    Generated: ${dayText(input.generatedAt)}`, left, y)
  for (const line of filterLines(input)) {
    y += 14
    doc.text(line, left, y, { maxWidth: 500 })
  }

  y += 28
  doc.setFont('helvetica', 'bold').setFontSize(13)
  doc.text('Summary', left, y)
  doc.setFont('helvetica', 'normal').setFontSize(11)
  const s = input.summary
  const lines: Array<[string, string]> = [
    ['Transactions', s.total_transactions.toLocaleString('en-KE')],
    ['Money in', money(s.total_in)],
    ['Money out', money(s.total_out)],
    ['Net', money(s.net)],
    ['Average transaction', money(s.average_transaction)],
    ['Active days', s.active_days.toLocaleString('en-KE')],
  ]
  for (const [label, value] of lines) {
    y += 16
    doc.text(`${label}: ${value}`, left, y)
  }

  y += 30
  doc.setFont('helvetica', 'bold').setFontSize(13)
  const who =
    input.filters.direction === 'out'
      ? 'Top suppliers (you paid)'
      : input.filters.direction === 'in'
        ? 'Top customers (paid you)'
        : 'Top counterparties (in and out)'
  doc.text(input.filters.category ? `${who}, ${input.filters.category}` : who, left, y)
  doc.setFontSize(10)
  y += 16
  const cols = [left, left + 180, left + 225, left + 340, left + 430]
  const heads = ['Name', 'Count', 'Total', 'Last seen', ...(input.withSegments ? ['Segment'] : [])]
  for (const [i, h] of heads.entries()) {
    doc.text(h, cols[i]!, y)
  }
  doc.setFont('helvetica', 'normal')
  const totalOf = (c: CustomerView) =>
    input.filters.direction === 'out'
      ? c.total_out
      : input.filters.direction === 'in'
        ? c.total_in
        : c.total
  for (const c of input.customers.slice(0, 10)) {
    y += 14
    doc.text(c.counterparty.slice(0, 30), cols[0]!, y)
    doc.text(c.count.toLocaleString('en-KE'), cols[1]!, y)
    doc.text(money(totalOf(c)), cols[2]!, y)
    doc.text(dayText(c.last_seen), cols[3]!, y)
    if (input.withSegments) doc.text((c.segment ?? '-').replace(/_/g, ' '), cols[4]!, y)
  }
  if (input.customers.length === 0) {
    y += 14
    doc.text('Nobody in this period and these filters.', left, y)
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
    doc.text(short(max * f), x + 36, ly + 3, { align: 'right' })
  }
  const slot = (width - 50) / Math.max(1, months.length)
  const bar = Math.min(18, slot / 2.5)
  months.forEach((m, i) => {
    const sx = x + 46 + i * slot
    const hIn = (m.total_in / max) * plotH
    const hOut = (m.total_out / max) * plotH
    doc.setFillColor(46, 139, 87).rect(sx, base - hIn, bar, hIn, 'F')
    doc.setFillColor(205, 92, 92).rect(sx + bar + 2, base - hOut, bar, hOut, 'F')
    doc.setTextColor(60).text(monthText(m.period), sx, base + 12)
  })
  const ly = base + 30
  doc.setFillColor(46, 139, 87).rect(x + 46, ly - 8, 10, 10, 'F')
  doc.setTextColor(0).text('Money in', x + 60, ly)
  doc.setFillColor(205, 92, 92).rect(x + 120, ly - 8, 10, 10, 'F')
  doc.text('Money out (KES)', x + 134, ly)
  if (months.length === 0) doc.text('No transactions in this period.', x + 60, top + plotH / 2)
}

/** Axis labels: whole shillings with en-KE grouping, `1.2M` past a million. */
function short(n: number): string {
  return n >= 1e6
    ? `${(n / 1e6).toLocaleString('en-KE', { maximumFractionDigits: 1 })}M`
    : Math.round(n).toLocaleString('en-KE')
}
