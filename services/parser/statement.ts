import { Readable } from 'node:stream'
import Papa from 'papaparse'
import { parseAmountText } from '../kernel/money.ts'
import { parseLocalTime } from './local-time.ts'
import { counterpartyOf, type ParsedTransaction, type RowError } from './parsed.ts'

/** One chunk of a statement as it streams past: good rows, row errors, skipped failed rows. */
export interface StatementChunk {
  transactions: ParsedTransaction[]
  /** Row numbers (1-based records of the file) of `transactions`, same order. */
  rows: number[]
  errors: RowError[]
  skipped: number
}

const COLUMNS = {
  receipt: ['receipt no.', 'receipt no', 'receipt'],
  time: ['completion time', 'date', 'time'],
  details: ['details', 'description'],
  status: ['transaction status', 'status'],
  paidIn: ['paid in', 'paid in (ksh)', 'credit'],
  withdrawn: ['withdrawn', 'withdrawn (ksh)', 'paid out', 'debit'],
  balance: ['balance', 'balance (ksh)'],
} as const
type Column = keyof typeof COLUMNS

/** papaparse reads Node streams; its typings only admit browser inputs. */
const parseNodeStream = Papa.parse as unknown as (
  input: Readable,
  config: Omit<Papa.ParseConfig<string[]>, 'chunk'> & {
    chunk: (result: Papa.ParseResult<string[]>, parser: Papa.Parser) => void
    error: (err: Error) => void
  },
) => void

/** Statuses of rows that moved no money: counted as skipped, not as errors. */
const NOT_DONE = /^(failed|cancelled|canceled|declined|pending|expired)$/i

function headerOf(cells: string[]): Record<Column, number> | null {
  const lower = cells.map((c) => c.trim().toLowerCase())
  const at = (names: readonly string[]) => lower.findIndex((c) => names.includes(c))
  const map = Object.fromEntries(
    Object.entries(COLUMNS).map(([k, names]) => [k, at(names)]),
  ) as Record<Column, number>
  if (map.receipt < 0 || map.time < 0 || map.details < 0) return null
  if (map.paidIn < 0 && map.withdrawn < 0) return null
  return map
}

/**
 * Streams an M-Pesa full statement (CSV) through papaparse and hands it on in chunks, so a
 * 100,000-row file is never held as rows all at once. Everything before the header row (the
 * statement's preamble: name, number, period, summary table) is ignored.
 *
 * `onChunk` is awaited before the parser reads on, so storage keeps pace with parsing.
 */
export async function streamStatement(
  source: ReadableStream<Uint8Array>,
  opts: { timeZone: string; onChunk: (chunk: StatementChunk) => Promise<void> | void },
): Promise<{ headerFound: boolean; rows: number }> {
  let header: Record<Column, number> | null = null
  let record = 0
  const parseRow = (cells: string[], row: number, out: StatementChunk) => {
    const h = header!
    const cell = (c: Column) => (h[c] >= 0 ? (cells[h[c]] ?? '').trim() : '')
    const receipt = cell('receipt')
    const details = cell('details')
    const paidIn = cell('paidIn')
    const withdrawn = cell('withdrawn')
    // Blank lines, footers and disclaimers after the table carry no amount and no receipt.
    if (!paidIn && !withdrawn && !/^[A-Z0-9]{6,20}$/i.test(receipt)) return
    // A header repeated on every page of a printed statement.
    if (/^receipt/i.test(receipt)) return
    if (NOT_DONE.test(cell('status'))) {
      out.skipped++
      return
    }
    if (!/^[A-Z0-9]{6,20}$/i.test(receipt)) {
      out.errors.push({
        row,
        field: 'Receipt No.',
        message: 'the receipt number is missing or malformed',
      })
      return
    }
    const occurredAt = parseLocalTime(cell('time'), opts.timeZone)
    if (!occurredAt) {
      out.errors.push({
        row,
        field: 'Completion Time',
        message: `'${cell('time')}' is not a date and time`,
      })
      return
    }
    const inCents = parseAmountText(paidIn)
    const outCents = parseAmountText(withdrawn)
    if ((paidIn && inCents === null) || (withdrawn && outCents === null)) {
      out.errors.push({
        row,
        field: paidIn && inCents === null ? 'Paid In' : 'Withdrawn',
        message: 'the amount is not a number with at most 2 decimals',
      })
      return
    }
    const amountIn = Math.abs(inCents ?? 0)
    const amountOut = Math.abs(outCents ?? 0)
    if (amountIn > 0 === amountOut > 0) {
      out.errors.push({
        row,
        field: 'Paid In',
        message: 'exactly one of Paid In and Withdrawn must be set',
      })
      return
    }
    const balanceText = cell('balance')
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
      balance: balanceText ? parseAmountText(balanceText) : null,
    }
    if (reversal) t.reversalOf = reversal[1]!.toUpperCase()
    out.transactions.push(t)
    out.rows.push(row)
  }

  await new Promise<void>((resolve, reject) => {
    let failed = false
    parseNodeStream(Readable.fromWeb(source as never), {
      skipEmptyLines: true,
      chunk: (result: Papa.ParseResult<string[]>, parser: Papa.Parser) => {
        const out: StatementChunk = { transactions: [], rows: [], errors: [], skipped: 0 }
        for (const cells of result.data) {
          record++
          if (!header) {
            header = headerOf(cells)
            continue
          }
          parseRow(cells, record, out)
        }
        parser.pause()
        Promise.resolve(opts.onChunk(out)).then(
          () => parser.resume(),
          (err) => {
            failed = true
            parser.abort()
            reject(err)
          },
        )
      },
      complete: () => {
        if (!failed) resolve()
      },
      error: (err: Error) => reject(err),
    })
  })
  return { headerFound: header !== null, rows: record }
}
