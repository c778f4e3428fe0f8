import { jsPDF } from 'jspdf'
import Papa from 'papaparse'
import { KIND_LABELS, KINDS } from '../../schema/vocabulary.ts'
import { EXPORT_SELECT, exportPageBytes } from './csv.ts'
import { sent, sliceCutter, writeSlices } from './csv-slices.ts'
import type { CustomerView } from './customers.ts'
import type { Scope, Summary, TrendPoint } from './summary.ts'
import { type TransactionFilters, VIEW_FIELDS, whereOf } from './transactions.ts'

export { neutraliseCell, unparsePage } from './csv.ts'

/**
 * Rows a page. Small pages keep what a reader holds at once small: a worker's garbage between
 * collections grows with the page (peak RSS of two workers +76 MB at 2,000 rows, +44 MB at 500),
 * and the CPU per row is the same.
 */
const PAGE = 500
/** Rows a slice of a whole-history export (csv-slices.ts); fewer rows stay on this thread. */
const SLICE_ROWS = 50_000
/**
 * Whole-history exports running on worker threads: one at a time, since its two threads already
 * keep two cores busy; another meanwhile is read here, page by page, as a filtered one is.
 */
let threaded = 0
const FILTERS = [
  'direction',
  'kind',
  'leg',
  'category',
  'min_amount',
  'max_amount',
  'phone',
  'q',
] as const

/**
 * The filtered transactions as CSV, streamed page by page, so memory stays at a few pages
 * whatever the row count. Columns are the read-back fields (DESIGN §11). The export of the whole
 * history (no filter, no period, the whole business) past one slice is read and written by
 * worker threads (csv-slices.ts); anything else reads one keyset page at a time here, giving the
 * event loop a turn after each. A direct stream: pages go to the response as they are made, and
 * the writer waits while the client is behind.
 */
export function exportCsv(
  scope: Scope,
  filters: TransactionFilters,
  opts: { sliceRows?: number } = {},
): ReadableStream<Uint8Array> {
  const { sql, args } = whereOf(scope, filters)
  const whole =
    scope.userId === null &&
    scope.range.fromMs === null &&
    scope.range.toMs === null &&
    scope.db.path !== ':memory:' &&
    FILTERS.every((f) => filters[f] === undefined || filters[f] === '')
  const write = async (controller: ReadableStreamDirectController) => {
    if (!(await sent(controller, `${Papa.unparse([VIEW_FIELDS as never])}\r\n`))) return
    const cut =
      whole && threaded === 0
        ? sliceCutter(scope.db.sqlite, sql, args, opts.sliceRows ?? SLICE_ROWS)
        : null
    const first = cut?.()
    if (!cut || !first?.lo) return writePages(controller, scope, sql, args)
    threaded++
    try {
      const rows = { where: sql, args, page: PAGE }
      // An erased tenant (its handle closed for good) fails the export at the next page.
      await writeSlices(controller, scope.db.path, rows, first, cut, () => scope.db.gone)
    } finally {
      threaded--
    }
  }
  const source = {
    type: 'direct',
    // The statements prepared for the export live on the tenant's connection, which the
    // registry's LRU may close between two pages to free descriptors: held, it stays open.
    async pull(controller: ReadableStreamDirectController) {
      const release = scope.db.hold()
      try {
        await write(controller)
      } finally {
        release()
      }
    },
  }
  return new ReadableStream(source as never)
}

/** Every page of the rows `where` selects, read and unparsed on this thread. */
async function writePages(
  controller: ReadableStreamDirectController,
  scope: Scope,
  where: string,
  args: unknown[],
): Promise<void> {
  const first = scope.db.sqlite.query(
    `${EXPORT_SELECT} WHERE ${where} ORDER BY occurred_at DESC, id DESC LIMIT ?`,
  )
  const next = scope.db.sqlite.query(
    `${EXPORT_SELECT} WHERE ${where}
     AND (occurred_at, id) < (?, ?) ORDER BY occurred_at DESC, id DESC LIMIT ?`,
  )
  let after: [string, string] | null = null
  for (;;) {
    const rows = (
      after
        ? next.values(...(args as never[]), after[0], after[1], PAGE)
        : first.values(...(args as never[]), PAGE)
    ) as unknown[][]
    if (rows.length === 0) break
    const last = rows[rows.length - 1]!
    after = [last[1] as string, last[0] as string]
    if (!(await sent(controller, exportPageBytes(rows)))) return
    if (rows.length < PAGE) break
    await new Promise((resolve) => setImmediate(resolve))
  }
  controller.close()
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
  kind?: string | undefined
  leg?: string | undefined
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
    ...(f.kind ? [`Kind: ${KIND_LABELS[f.kind as keyof typeof KIND_LABELS] ?? f.kind}`] : []),
    f.scope === 'me' ? 'Transactions: mine only' : 'Transactions: the whole business',
  ]
  const csvOnly = [
    f.min_amount !== undefined ? `amount from ${money(f.min_amount)}` : null,
    f.max_amount !== undefined ? `amount up to ${money(f.max_amount)}` : null,
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
    ['Money in', money(s.total_in)],
    ['Money out', money(s.total_out)],
    ['Revenue', money(s.revenue)],
    ['Expenses', money(s.expenses)],
    ['Net (revenue - expenses)', money(s.net)],
    ['Average transaction', money(s.average_transaction)],
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
    doc.text(money(totalOf(c)), cols[2]!, y)
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
    doc.text(`${KIND_LABELS[kind]}: ${money(k.amount_in)} / ${money(k.amount_out)}`, x, y, {
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
