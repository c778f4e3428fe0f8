import { KIND_LABELS, KINDS } from '../../schema/vocabulary.ts'
import { jsPDF } from '../kernel/jspdf.ts'
import type { CustomerView } from './customers.ts'
import { dayText, kes } from './insight-words.ts'
import type { Summary, TrendPoint } from './summary.ts'

/** The one-page PDF report (`GET /export?format=pdf`); the CSV export is export.ts's. */

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
  kind?: string | undefined
  leg?: string | undefined
  category?: string | undefined
  scope?: 'me' | 'tenant' | undefined
  min_amount?: number | undefined
  max_amount?: number | undefined
  phone?: string | undefined
  q?: string | undefined
}

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')
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
    ...(f.kind ? [`Kind: ${KIND_LABELS[f.kind as keyof typeof KIND_LABELS] ?? f.kind}`] : []),
    f.scope === 'me' ? 'Transactions: mine only' : 'Transactions: the whole business',
  ]
  const csvOnly = [
    f.min_amount !== undefined ? `amount from ${kes(f.min_amount)}` : null,
    f.max_amount !== undefined ? `amount up to ${kes(f.max_amount)}` : null,
    f.phone ? `phone ${f.phone}` : null,
    f.leg !== undefined ? `leg "${f.leg}"` : null,
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
    ['Money in', kes(s.total_in)],
    ['Money out', kes(s.total_out)],
    ['Revenue', kes(s.revenue)],
    ['Expenses', kes(s.expenses)],
    ['Net (revenue - expenses)', kes(s.net)],
    ['Average transaction', kes(s.average_transaction)],
    ['Active days', s.active_days.toLocaleString('en-KE')],
  ]
  const top = y
  for (const [label, value] of lines) {
    y += 16
    doc.text(`${label}: ${value}`, left, y)
  }
  y = Math.max(y, drawKinds(doc, s, left + 270, top))

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
    doc.text(kes(totalOf(c)), cols[2]!, y)
    doc.text(dayText(c.last_seen), cols[3]!, y)
    if (input.withSegments) doc.text((c.segment ?? '-').replace(/_/g, ' '), cols[4]!, y)
  }
  if (input.customers.length === 0) {
    y += 14
    doc.text('Nobody in this period and these filters.', left, y)
  }

  y += 34
  drawMonthlyChart(doc, { months: input.months.slice(-12), x: left, y, width: 500, height: 220 })
  return doc.output('arraybuffer')
}

/**
 * The summary's breakdown by kind beside it, one line a kind with money (loans, savings, own
 * transfers, cash, charges each on its own line); answers the y it reached.
 */
function drawKinds(doc: jsPDF, s: Summary, x: number, y: number): number {
  doc.setFont('helvetica', 'bold').setFontSize(11)
  doc.text('By kind (in / out)', x, y)
  doc.setFont('helvetica', 'normal').setFontSize(9)
  let any = false
  for (const kind of KINDS) {
    const k = s.by_kind[kind]
    if (!k || k.count === 0) continue
    any = true
    y += 13
    doc.text(`${KIND_LABELS[kind]}: ${kes(k.amount_in)} / ${kes(k.amount_out)}`, x, y, {
      maxWidth: 240,
    })
  }
  if (!any) {
    y += 13
    doc.text('No transactions.', x, y)
  }
  doc.setFontSize(11)
  return y
}

function drawMonthlyChart(
  doc: jsPDF,
  {
    months,
    x,
    y,
    width,
    height,
  }: { months: TrendPoint[]; x: number; y: number; width: number; height: number },
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
