import * as XLSX from '@e965/xlsx'
import { gridXlsx } from '../test/support/xlsx.ts'

/**
 * The demo generator's rows written in the org-portal (M-PESA business) layout, as the portal's
 * CSV and XLSX: the preamble with opening and closing balance and totals, the 14-column table,
 * newest first, dates DD-MM-YYYY HH:MM:SS, Withdrawn negative (test/fixtures/statements/org-portal).
 * The XLSX twice: as SheetJS writes it (every cell an inline text) and as Excel saves it (texts in
 * the shared strings, amounts as numbers).
 */
export function orgPortalFiles(
  rows: Array<{
    receipt_number: string
    occurred_at: string
    description: string
    direction: 'in' | 'out'
    amount: number
    balance: number
  }>,
): Array<{ name: string; file: File }> {
  const cents = (n: number) => Math.round(n * 100)
  const fixed = (c: number) => (c / 100).toFixed(2)
  const local = (iso: string) => {
    const d = new Date(Date.parse(iso) + 3 * 3600_000).toISOString()
    return `${d.slice(8, 10)}-${d.slice(5, 7)}-${d.slice(0, 4)} ${d.slice(11, 19)}`
  }
  let paidIn = 0
  let paidOut = 0
  for (const r of rows) {
    if (r.direction === 'in') paidIn += cents(r.amount)
    else paidOut += cents(r.amount)
  }
  const first = rows[0]!
  const last = rows.at(-1)!
  const opening = cents(first.balance) - (first.direction === 'in' ? 1 : -1) * cents(first.amount)
  const grid: string[][] = [
    ['Account Holder:', '600100 - BENCH TRADERS'],
    ['Short Code:', '600100'],
    ['Account:', 'Utility Account'],
    ['Time Period:', '', `From ${local(first.occurred_at)}`, '', `To ${local(last.occurred_at)}`],
    [
      'Opening Balance:',
      fixed(opening),
      'Closing Balance:',
      fixed(cents(last.balance)),
      'Total Paid In:',
      fixed(paidIn),
      'Total Withdrawn:',
      fixed(-paidOut),
    ],
    'Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.,Currency'.split(
      ',',
    ),
  ]
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i]!
    const at = local(r.occurred_at)
    grid.push([
      r.receipt_number,
      at,
      at,
      r.description,
      'Completed',
      r.direction === 'in' ? fixed(cents(r.amount)) : '',
      r.direction === 'out' ? fixed(-cents(r.amount)) : '',
      fixed(cents(r.balance)),
      'true',
      r.direction === 'in' ? 'Pay Bill Online' : 'Pay Utility',
      '',
      '',
      '',
      'KES',
    ])
  }
  const csv = grid
    .map((row) => row.map((c) => (/[",\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(','))
    .join('\r\n')
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(grid), 'Statement')
  const xlsx = new Uint8Array(
    XLSX.write(book, { type: 'array', bookType: 'xlsx', compression: true }),
  )
  const header = grid.findIndex((r) => r[0] === 'Receipt No.')
  const typed = grid.map((row, i) =>
    i <= header ? row : row.map((c, k) => (k >= 5 && k <= 7 && c !== '' ? Number(c) : c)),
  )
  return [
    { name: 'org-portal statement CSV', file: new File([csv], 'org.csv', { type: 'text/csv' }) },
    {
      name: 'org-portal statement XLSX (SheetJS, inline texts)',
      file: new File([xlsx], 'org.xlsx'),
    },
    {
      name: 'org-portal statement XLSX (as Excel saves: shared strings, numbers)',
      file: new File([gridXlsx(typed)], 'org-excel.xlsx'),
    },
  ]
}
