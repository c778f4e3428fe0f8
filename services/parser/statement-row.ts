import { parseAmountText } from '../kernel/money.ts'
import { kindOf, legOf } from './kinds.ts'
import { parseLocalTimeMs } from './local-time.ts'
import { counterpartyOf, type ParsedTransaction, type RowError } from './parsed.ts'
import type { ProofVerdict, StatementProof } from './statement-proof.ts'

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
  /** The layout recognised (layouts.ts), by id and in words. */
  layout?: { id: string; name: string }
  /** Rows of the detailed table read, and what became of each (kept = handed on to be stored). */
  counts?: { read: number; kept: number; skipped: number; rejected: number }
  /** Whether the kept rows reproduce the file's own totals and running balance. */
  proof?: ProofVerdict
}

export const COLUMNS = {
  receipt: ['receipt no.', 'receipt no', 'receipt', 'receipt number', 'transaction id'],
  time: ['completion time', 'date', 'time', 'completion date', 'transaction date'],
  details: ['details', 'description', 'transaction details'],
  status: ['transaction status', 'status'],
  paidIn: ['paid in', 'paid in (ksh)', 'paid in (kes)', 'credit', 'money in'],
  withdrawn: ['withdrawn', 'withdrawn (ksh)', 'withdrawn (kes)', 'paid out', 'debit', 'money out'],
  balance: ['balance', 'balance (ksh)', 'balance (kes)'],
  // Org-portal (M-PESA business) statements only.
  initiationTime: ['initiation time'],
  reasonType: ['reason type'],
  otherParty: ['other party info'],
  linkedId: ['linked transaction id'],
  accountNo: ['a/c no.', 'a/c no', 'account no.', 'account no'],
} as const
export type Column = keyof typeof COLUMNS
export type StatementCells = Record<Column, string>

/** Cells of a row with every column empty, to fill in. */
export const emptyCells = (): StatementCells => ({
  receipt: '',
  time: '',
  details: '',
  status: '',
  paidIn: '',
  withdrawn: '',
  balance: '',
  initiationTime: '',
  reasonType: '',
  otherParty: '',
  linkedId: '',
  accountNo: '',
})

/** The header an M-Pesa full statement's detailed table has, for messages. */
export const EXPECTED_HEADER =
  'Receipt No., Completion Time, Details, Transaction Status, Paid In, Withdrawn, Balance'

/** Statuses of rows that moved no money: counted as skipped, not as errors. */
const NOT_DONE = /^(failed|cancelled|canceled|declined|pending|expired)$/i
const RECEIPT = /^[A-Z0-9]{6,20}$/i
/** Made once: a pattern written in a function is a new object each row (parsed.ts says why). */
const RECEIPT_LABEL = /^receipt/i
const REVERSAL_OF = /reversal of transaction\s+([A-Z0-9]{6,20})/i

/** A header label as compared: lower case, one space, no trailing colon or asterisk. */
export const labelOf = (c: string) =>
  c
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[:*]+$/, '')
    .trim()

/** Column positions of a header row (index of each label in `labels`), or null if it is not one. */
export function headerOf(labels: string[]): Record<Column, number> | null {
  const lower = labels.map(labelOf)
  const at = (names: readonly string[]) => lower.findIndex((c) => names.includes(c))
  const map = Object.fromEntries(
    Object.entries(COLUMNS).map(([k, names]) => [k, at(names)]),
  ) as Record<Column, number>
  if (map.receipt < 0 || map.time < 0 || map.details < 0) return null
  if (map.paidIn < 0 && map.withdrawn < 0) return null
  return map
}

/**
 * A row of its own holding only the rest of a wrapped cell (PDF-to-CSV converters and the PDF's
 * own layout): no receipt, no time, no amount, so it belongs to the transaction above it. Its text
 * is mostly Details, sometimes the other wrapped text cells (Other Party Info, Reason Type).
 */
export function isContinuation(cells: StatementCells): boolean {
  return (
    !cells.receipt &&
    !cells.time &&
    !cells.paidIn &&
    !cells.withdrawn &&
    !cells.balance &&
    (cells.details !== '' || cells.otherParty !== '' || cells.reasonType !== '')
  )
}

/** Appends a continuation row's text cells to its transaction's, each as one line of text. */
export function joinDetails(into: StatementCells, more: StatementCells): void {
  const join = (a: string, b: string) => (b ? `${a} ${b}`.replace(/\s+/g, ' ').trim() : a)
  into.details = join(into.details, more.details)
  into.otherParty = join(into.otherParty, more.otherParty)
  into.reasonType = join(into.reasonType, more.reasonType)
  // A status wrapped as "Complete" / "d" in a narrow column.
  if (
    more.status &&
    !/^(completed|failed|cancelled|canceled|declined|pending|expired)$/i.test(into.status)
  )
    into.status = `${into.status}${more.status}`
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

/** What a row of the table came to, for the statement's proof (statement-proof.ts). */
export type RowNote = StatementProof['note']

/** Dates a statement, an SMS or a payment may carry: from M-Pesa's first year to a day ahead. */
export const EARLIEST = Date.UTC(2007, 0, 1)
export const AHEAD_MS = 86_400_000

/**
 * True when a row's cells read as a row of the detailed table (a receipt, a time or a status),
 * not as text that stands between tables (a summary line, a footer): those go to the layout's
 * totals instead. A table row that cannot be read is rejected, so it is still in a counter.
 */
export function isTableRow(cells: StatementCells): boolean {
  return RECEIPT.test(cells.receipt) || TIME_LIKE.test(cells.time) || cells.status !== ''
}
const TIME_LIKE = /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}/

/**
 * Reads one table row into `out`: a transaction, a skipped row that moved no money (failed,
 * cancelled), an error naming the field, or nothing for blank lines, footers and repeated
 * headers. The row's money is noted for the proof whatever became of it. Returns what it was.
 */
export function parseStatementRow(
  cells: StatementCells,
  row: number,
  timeZone: string,
  out: StatementChunk,
  note?: RowNote,
  nowMs: number = Date.now(),
): 'kept' | 'skipped' | 'rejected' | 'none' {
  const { receipt, details, paidIn, withdrawn } = cells
  // Blank lines, footers and disclaimers after the table carry no amount and no receipt.
  if (!paidIn && !withdrawn && !RECEIPT.test(receipt)) return 'none'
  // A code alone on its line (the statement's verification code under the table).
  if (!paidIn && !withdrawn && !cells.time && !details && !cells.balance) return 'none'
  // A header repeated on every page of a printed statement.
  if (RECEIPT_LABEL.test(receipt)) return 'none'
  const ms = parseLocalTimeMs(cells.time, timeZone)
  const occurredAt = Number.isNaN(ms) ? null : new Date(ms).toISOString()
  const inCents = cellCents(paidIn)
  const outCents = cellCents(withdrawn)
  const balance = cells.balance ? cellCents(cells.balance) : null
  // The 2025 app export prints 0.00 in the column a row does not use; Withdrawn may be signed.
  const amountIn = Math.abs(inCents ?? 0)
  const amountOut = Math.abs(outCents ?? 0)
  const done = !NOT_DONE.test(cells.status.trim())
  note?.(row, cells.time, ms, amountIn, amountOut, balance ?? Number.NaN, done)
  if (!done) {
    out.skipped++
    return 'skipped'
  }
  if (!RECEIPT.test(receipt))
    return rejectRow(
      out,
      row,
      'Receipt No.',
      `the receipt number '${receipt}' is missing or malformed`,
    )
  if (!occurredAt) {
    return rejectRow(
      out,
      row,
      'Completion Time',
      cells.time ? `'${cells.time}' is not a date and time` : 'the completion time is missing',
    )
  }
  if (ms < EARLIEST || ms > nowMs + AHEAD_MS) {
    return rejectRow(out, row, 'Completion Time', `'${cells.time}' is outside 2007 to tomorrow`)
  }
  if ((paidIn && inCents === null) || (withdrawn && outCents === null)) {
    const field = paidIn && inCents === null ? 'Paid In' : 'Withdrawn'
    return rejectRow(
      out,
      row,
      field,
      `'${field === 'Paid In' ? paidIn : withdrawn}' is not an amount`,
    )
  }
  if (amountIn > 0 === amountOut > 0) {
    return rejectRow(
      out,
      row,
      'Paid In',
      amountIn > 0
        ? 'both Paid In and Withdrawn hold an amount'
        : 'neither Paid In nor Withdrawn holds an amount',
    )
  }
  const direction = amountIn > 0 ? 'in' : 'out'
  const words = cells.reasonType ? `${details} ${cells.reasonType}` : details
  const kind = kindOf(words, direction)
  const party = counterpartyOf(details)
  const reversal = REVERSAL_OF.exec(details)
  const t: ParsedTransaction = {
    occurredAt: occurredAt,
    amount: amountIn || amountOut,
    direction,
    counterpartyName: party.name ?? otherPartyName(cells.otherParty),
    counterpartyPhone: party.phone,
    description: details || cells.reasonType || (amountIn > 0 ? 'Paid in' : 'Withdrawn'),
    receiptNumber: receipt.toUpperCase(),
    balance,
    kind,
    leg: legOf(kind),
  }
  if (reversal) t.reversalOf = reversal[1]!.toUpperCase()
  out.transactions.push(t)
  out.rows.push(row)
  return 'kept'
}

/** A row refused, naming the field: `parseStatementRow`'s answer for it. */
function rejectRow(out: StatementChunk, row: number, field: string, message: string) {
  out.errors.push({ row, field, message })
  return 'rejected' as const
}

/**
 * An org statement's Other Party Info ("254722****108 - JOHN **** DOE", "600000 - ACME LTD"):
 * the name part, masked as M-Pesa masks it.
 */
function otherPartyName(info: string): string | null {
  if (!info) return null
  const dash = info.indexOf(' - ')
  const name = (dash >= 0 ? info.slice(dash + 3) : info).trim()
  return name || null
}
