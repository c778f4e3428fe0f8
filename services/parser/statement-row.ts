import { parseAmountText } from '../kernel/money.ts'
import { parseLocalTime } from './local-time.ts'
import { counterpartyOf, type ParsedTransaction, type RowError } from './parsed.ts'

/**
 * One row of an M-Pesa statement's detailed table, whatever file it came from (CSV or PDF): the
 * header names, the cells by column, and the rules that turn a row into a transaction, a skip or
 * an error. Both readers hand their rows here so a statement means the same in either format.
 */

/** One chunk of a statement as it is read: good rows, row errors, skipped failed rows. */
export interface StatementChunk {
  transactions: ParsedTransaction[]
  /** Row numbers of `transactions`, same order (CSV: 1-based records; PDF: table rows). */
  rows: number[]
  /** Transaction ids of `transactions`, same order, when made while reading (statement-worker.ts). */
  ids?: string[]
  errors: RowError[]
  skipped: number
}

export const newChunk = (): StatementChunk => ({
  transactions: [],
  rows: [],
  errors: [],
  skipped: 0,
})

/** What a reader found: whether the table header was there, and if not, what stood instead. */
export interface StatementRead {
  headerFound: boolean
  rows: number
  /** The first header-like line of a file whose header we did not recognise. */
  found?: string
}

export const COLUMNS = {
  receipt: ['receipt no.', 'receipt no', 'receipt'],
  time: ['completion time', 'date', 'time'],
  details: ['details', 'description'],
  status: ['transaction status', 'status'],
  paidIn: ['paid in', 'paid in (ksh)', 'credit'],
  withdrawn: ['withdrawn', 'withdrawn (ksh)', 'paid out', 'debit'],
  balance: ['balance', 'balance (ksh)'],
} as const
export type Column = keyof typeof COLUMNS
export type StatementCells = Record<Column, string>

/** The header an M-Pesa full statement's detailed table has, for messages. */
export const EXPECTED_HEADER =
  'Receipt No., Completion Time, Details, Transaction Status, Paid In, Withdrawn, Balance'

/** Statuses of rows that moved no money: counted as skipped, not as errors. */
const NOT_DONE = /^(failed|cancelled|canceled|declined|pending|expired)$/i
const RECEIPT = /^[A-Z0-9]{6,20}$/i

/** Column positions of a header row (index of each label in `labels`), or null if it is not one. */
export function headerOf(labels: string[]): Record<Column, number> | null {
  const lower = labels.map((c) => c.trim().toLowerCase().replace(/\s+/g, ' '))
  const at = (names: readonly string[]) => lower.findIndex((c) => names.includes(c))
  const map = Object.fromEntries(
    Object.entries(COLUMNS).map(([k, names]) => [k, at(names)]),
  ) as Record<Column, number>
  if (map.receipt < 0 || map.time < 0 || map.details < 0) return null
  if (map.paidIn < 0 && map.withdrawn < 0) return null
  return map
}

/**
 * A Details cell wrapped onto a row of its own (PDF-to-CSV converters and the PDF's own layout):
 * nothing but Details text, so it belongs to the transaction above it.
 */
export function isContinuation(cells: StatementCells): boolean {
  return (
    cells.details !== '' &&
    !cells.receipt &&
    !cells.time &&
    !cells.status &&
    !cells.paidIn &&
    !cells.withdrawn &&
    !cells.balance
  )
}

/** Appends a continuation row's Details to its transaction's, as one line of text. */
export function joinDetails(into: StatementCells, more: StatementCells): void {
  into.details = `${into.details} ${more.details}`.replace(/\s+/g, ' ').trim()
}

/**
 * `parseAmountText`'s answer for an amount cell, read digit by digit for the plain amounts nearly
 * every row has ("50,690.00", "-300.00"): three cells a row, 100,000 rows a statement, and the
 * general clean-up (three replaces, a trim, a pattern) was a fifth of reading a row. Anything
 * else, and amounts long enough for floating point to matter, take the general way.
 */
export function cellCents(cell: string): number | null {
  if (cell === '') return null
  const negative = cell.charCodeAt(0) === 45
  let i = negative ? 1 : 0
  if (!isDigit(cell.charCodeAt(i))) return parseAmountText(cell)
  let cents = 0
  let digits = 0
  for (; i < cell.length; i++) {
    const c = cell.charCodeAt(i)
    if (isDigit(c)) {
      cents = cents * 10 + c - 48
      digits++
    } else if (c !== 44) break
  }
  let decimals = 0
  if (i < cell.length) {
    if (cell.charCodeAt(i) !== 46) return parseAmountText(cell)
    for (i++; i < cell.length; i++, decimals++) {
      const c = cell.charCodeAt(i)
      if (!isDigit(c)) return parseAmountText(cell)
      cents = cents * 10 + c - 48
    }
    if (decimals === 0 || decimals > 2) return parseAmountText(cell)
  }
  if (digits + decimals > 13) return parseAmountText(cell)
  cents *= decimals === 2 ? 1 : decimals === 1 ? 10 : 100
  return negative ? -cents : cents
}

const isDigit = (c: number) => c >= 48 && c <= 57

/**
 * Reads one table row into `out`: a transaction, a skipped failed row, an error naming the field,
 * or nothing for blank lines, footers and repeated headers. True when it became a transaction.
 */
export function parseStatementRow(
  cells: StatementCells,
  row: number,
  timeZone: string,
  out: StatementChunk,
): boolean {
  const { receipt, details, paidIn, withdrawn } = cells
  // Blank lines, footers and disclaimers after the table carry no amount and no receipt.
  if (!paidIn && !withdrawn && !RECEIPT.test(receipt)) return false
  // A header repeated on every page of a printed statement.
  if (/^receipt/i.test(receipt)) return false
  if (NOT_DONE.test(cells.status)) {
    out.skipped++
    return false
  }
  const fail = (field: string, message: string) => {
    out.errors.push({ row, field, message })
    return false
  }
  if (!RECEIPT.test(receipt))
    return fail('Receipt No.', 'the receipt number is missing or malformed')
  const occurredAt = parseLocalTime(cells.time, timeZone)
  if (!occurredAt) return fail('Completion Time', `'${cells.time}' is not a date and time`)
  const inCents = cellCents(paidIn)
  const outCents = cellCents(withdrawn)
  if ((paidIn && inCents === null) || (withdrawn && outCents === null)) {
    return fail(
      paidIn && inCents === null ? 'Paid In' : 'Withdrawn',
      'the amount is not a number with at most 2 decimals',
    )
  }
  const amountIn = Math.abs(inCents ?? 0)
  const amountOut = Math.abs(outCents ?? 0)
  if (amountIn > 0 === amountOut > 0) {
    return fail('Paid In', 'exactly one of Paid In and Withdrawn must be set')
  }
  const party = counterpartyOf(details)
  const reversal = /reversal of transaction\s+([A-Z0-9]{6,20})/i.exec(details)
  const t: ParsedTransaction = {
    occurredAt,
    amount: amountIn || amountOut,
    direction: amountIn > 0 ? 'in' : 'out',
    counterpartyName: party.name,
    counterpartyPhone: party.phone,
    description: details || (amountIn > 0 ? 'Paid in' : 'Withdrawn'),
    receiptNumber: receipt.toUpperCase(),
    balance: cells.balance ? cellCents(cells.balance) : null,
  }
  if (reversal) t.reversalOf = reversal[1]!.toUpperCase()
  out.transactions.push(t)
  out.rows.push(row)
  return true
}
