import { jsPDF } from '../kernel/jspdf.ts'
import { unparsePage } from './csv.ts'
import type { CustomerView } from './customers.ts'
import type { Group } from './groups.ts'
import type { Insight } from './insight-rules.ts'
import { dayText, kes } from './insight-words.ts'
import type { reconcileStatement } from './reconciliation.ts'

/**
 * Owner reports beside the transactions export: the counterparties of one group, the insights and
 * the reconciliation of a period, each as CSV (formula cells neutralised) or a PDF table.
 */
export interface Report {
  /** File name stem, e.g. `customers`. */
  name: string
  title: string
  /** Lines under the title: tenant, period, what the table holds. */
  lines: string[]
  headers: string[]
  rows: (string | number | null)[][]
  /** The same rows as the PDF shows them (money and days in words). */
  shown: string[][]
}

export const GROUP_TITLES: Record<Group, string> = {
  customers: 'Customers (they paid you)',
  suppliers: 'Suppliers (you paid them)',
  staff: 'Staff (salaries)',
  landlord: 'Landlord (rent)',
  utilities: 'Utilities (power, water, internet)',
  agents: 'Agents (cash in and out)',
  lenders: 'Lenders (Fuliza, overdraft, loans)',
}

const periodLine = (from?: string, to?: string) =>
  `Period: ${from ? dayText(from) : 'from the first transaction'} to ${to ? dayText(to) : 'the last'}`

export function groupReport(
  group: Group,
  list: CustomerView[],
  head: { tenantId: string; from?: string | undefined; to?: string | undefined },
): Report {
  const rows = list.map((c) => [
    c.counterparty,
    c.counterparty_phone,
    c.count,
    c.total_in,
    c.total_out,
    c.first_seen.slice(0, 10),
    c.last_seen.slice(0, 10),
    c.segment,
  ])
  return {
    name: group,
    title: GROUP_TITLES[group],
    lines: [`Tenant: ${head.tenantId}`, periodLine(head.from, head.to)],
    headers: [
      'name',
      'phone',
      'payments',
      'paid_in',
      'paid_out',
      'first_seen',
      'last_seen',
      'segment',
    ],
    rows,
    shown: list.map((c) => [
      c.counterparty,
      String(c.count),
      kes(c.total_in),
      kes(c.total_out),
      dayText(c.last_seen),
    ]),
  }
}

export function insightsReport(
  list: Insight[],
  head: { tenantId: string; from?: string | undefined; to?: string | undefined; asOf: string },
): Report {
  return {
    name: 'insights',
    title: 'Insights',
    lines: [`Tenant: ${head.tenantId}`, periodLine(head.from, head.to ?? head.asOf)],
    headers: ['type', 'title', 'message'],
    rows: list.map((i) => [i.type, i.title, i.message]),
    shown: list.map((i) => [i.title, i.message]),
  }
}

type Reconciliation = ReturnType<typeof reconcileStatement>

export function reconciliationReport(
  r: Reconciliation,
  head: { tenantId: string; from?: string | undefined; to?: string | undefined },
): Report {
  const lists = [
    ['missing_from_statement', 'Recorded live, not on the statement', r.missing_from_statement],
    ['not_reported_live', 'On the statement, never reported live', r.not_reported_live],
    ['amount_mismatch', 'Amounts that disagree', r.amount_mismatches],
  ] as const
  const items = lists.flatMap(([finding, words, l]) =>
    l.data.map((i) => ({ finding, words, ...i })),
  )
  const b = r.balance
  return {
    name: 'reconciliation',
    title: 'Reconciliation: the statement against the live channels',
    lines: [
      `Tenant: ${head.tenantId}`,
      periodLine(head.from ?? r.period?.from, head.to ?? r.period?.to),
      `Statement rows: ${r.statement_rows}`,
      b
        ? `Closing balance: statement ${kes(b.statement_closing)}, platform ${kes(b.platform_running)}, difference ${kes(b.difference)}`
        : 'Closing balance: not printed on the statement',
    ],
    headers: ['finding', 'receipt_number', 'occurred_at', 'direction', 'amount', 'reported_by'],
    rows: items.map((i) => [
      i.finding,
      i.receipt_number,
      i.occurred_at,
      i.direction,
      i.amount,
      i.channel ?? i.source,
    ]),
    shown: items.map((i) => [
      i.words,
      i.receipt_number,
      dayText(i.occurred_at),
      kes(i.direction === 'out' ? -i.amount : i.amount),
    ]),
  }
}

export function reportCsv(r: Report): string {
  return unparsePage([r.headers, ...r.rows])
}

const PDF_HEADS: Record<string, string[]> = {
  insights: ['Insight', 'What it says'],
  reconciliation: ['Finding', 'Receipt', 'Day', 'Amount'],
}

/** The report as an A4 PDF table, pages added as the rows need them. */
export function reportPdf(r: Report, generatedAt: string): ArrayBuffer {
  const doc = new jsPDF({ unit: 'pt', format: 'a4' })
  const left = 48
  const bottom = doc.internal.pageSize.getHeight() - 48
  let y = 56
  doc.setFont('helvetica', 'bold').setFontSize(16)
  doc.text(r.title, left, y)
  doc.setFont('helvetica', 'normal').setFontSize(10)
  for (const line of [...r.lines, `Generated: ${dayText(generatedAt)}`]) {
    y += 14
    doc.text(line, left, y, { maxWidth: 500 })
  }
  const heads = PDF_HEADS[r.name] ?? ['Name', 'Payments', 'Paid in', 'Paid out', 'Last seen']
  const widths =
    heads.length === 2
      ? [170, 330]
      : heads.length === 4
        ? [200, 110, 90, 100]
        : [170, 60, 95, 95, 80]
  const row = (cells: string[], bold: boolean) => {
    doc.setFont('helvetica', bold ? 'bold' : 'normal')
    const wrapped = cells.map((c, i) => doc.splitTextToSize(c, widths[i]! - 6) as string[])
    const height = Math.max(...wrapped.map((w) => w.length)) * 12
    if (y + height > bottom) {
      doc.addPage()
      y = 56
    }
    let x = left
    wrapped.forEach((w, i) => {
      doc.text(w, x, y)
      x += widths[i]!
    })
    y += height + 4
  }
  y += 26
  row(heads, true)
  for (const cells of r.shown) row(cells, false)
  if (r.shown.length === 0) row(['Nothing in this period.'], false)
  return doc.output('arraybuffer')
}
