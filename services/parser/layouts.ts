import { parseAmountText } from '../kernel/money.ts'
import type { FileTotals } from './statement-proof.ts'
import type { Column } from './statement-row.ts'

/**
 * The statement layouts mmp reads (DESIGN §16; docs/statement-layouts.md says where each was
 * learnt). A layout is how to recognise a file (its table header and the text above it) and how
 * to read the totals it states about itself; the rows of every layout go through the same row
 * rules (statement-row.ts), since they share the detailed table's columns. The next bank or year
 * is one more entry here.
 */
export interface StatementLayout {
  id: string
  /** In the owner's words, for the import answer and the dashboard. */
  name: string
  /** True when this layout's file has this header (columns found) and this text above it. */
  recognise(columns: Record<Column, number>, preamble: string): boolean
  /** The totals the file states, read from its lines outside the detailed table. */
  totals(lines: string[]): FileTotals
}

/** An amount as a statement prints it ("1,234.50", "-300.00", "KSH 12.00"), in cents. */
function cents(text: string | undefined): number | undefined {
  if (!text) return undefined
  const v = parseAmountText(text.replace(/^(?:ksh|kes)\.?\s*/i, ''))
  return v === null ? undefined : Math.abs(v)
}

const AMOUNT = String.raw`(-?(?:ksh\.?\s*|kes\s*)?[\d,]+(?:\.\d{1,2})?)`

/** The TOTAL row of a SUMMARY table ("TOTAL 12,345.00 23,456.00"): paid in, then paid out. */
function summaryTotal(lines: string[]): FileTotals {
  const re = new RegExp(String.raw`^\s*total\s*:?\s+${AMOUNT}\s+${AMOUNT}\s*$`, 'i')
  for (const line of lines) {
    const m = re.exec(line)
    if (m) return { paidIn: cents(m[1]), paidOut: cents(m[2]) }
  }
  return {}
}

/** "Opening Balance: 1,000.00" / "Closing Balance 2,000.00" and "Total Paid In: …" lines. */
function labelledAmounts(lines: string[]): FileTotals {
  const out: FileTotals = {}
  const find = (label: string) => {
    const re = new RegExp(String.raw`${label}\s*[:=]?\s*${AMOUNT}`, 'i')
    for (const line of lines) {
      const m = re.exec(line)
      if (m) return cents(m[1])
    }
    return undefined
  }
  out.opening = find('opening balance')
  out.closing = find('closing balance')
  out.paidIn = find('total (?:paid in|money in|credits?|deposits?)')
  out.paidOut = find('total (?:withdrawn|paid out|money out|debits?|withdrawals?)')
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined))
}

const has = (columns: Record<Column, number>, c: Column) => columns[c] >= 0

export const LAYOUTS: StatementLayout[] = [
  {
    id: 'org-portal',
    name: 'M-PESA business (org portal) statement',
    recognise: (columns, preamble) =>
      has(columns, 'reasonType') ||
      has(columns, 'otherParty') ||
      has(columns, 'initiationTime') ||
      /\b(account holder|short ?code)\b/i.test(preamble),
    totals: (lines) => ({ ...summaryTotal(lines), ...labelledAmounts(lines) }),
  },
  {
    id: 'app-2025',
    name: 'M-PESA app full statement (2025)',
    recognise: (_, preamble) => /mpesa full statement|m-pesa full statement/i.test(preamble),
    totals: (lines) => ({ ...labelledAmounts(lines), ...summaryTotal(lines) }),
  },
  {
    id: 'personal',
    name: 'M-PESA personal statement',
    recognise: (_, preamble) =>
      /\b(m-?pesa statement|detailed statement|statement period|customer name)\b/i.test(preamble),
    totals: (lines) => ({ ...labelledAmounts(lines), ...summaryTotal(lines) }),
  },
  {
    id: 'table',
    name: 'M-PESA statement table (converted, no preamble)',
    recognise: () => true,
    totals: (lines) => ({ ...labelledAmounts(lines), ...summaryTotal(lines) }),
  },
]

/** The layout of a file with this header and this text above its table. */
export function layoutOf(columns: Record<Column, number>, preamble: string): StatementLayout {
  return LAYOUTS.find((l) => l.recognise(columns, preamble)) ?? LAYOUTS.at(-1)!
}
