import type { ParsedTransaction } from './parsed.ts'
import type { StatementChunk } from './statement-row.ts'

/**
 * A statement chunk as it crosses from the parsing thread (statement-worker.ts) to the one that
 * stores it: its rows' text fields joined into one string, split again on arrival, and their
 * numbers in one Float64Array. Posting the chunk's objects as they are cost 150-220 ms of
 * structured cloning for a 100,000-row statement, about what parsing it costs; this costs
 * 30-40 ms to pack and 15-20 ms to unpack (the numbers written as text and read back, twice that).
 */
export interface WireChunk {
  /** FIELDS strings a row joined by SEP ('' for null or absent), or null: see `transactions`. */
  fields: string | null
  /** Each row's number, amount and balance (NaN for null), or null with `fields`. */
  numbers: Float64Array | null
  count: number
  /** The chunk's transactions as objects, when the wire could not carry one (see `packChunk`). */
  transactions?: ParsedTransaction[]
  rows?: number[]
  ids?: string[]
  /** Whether the chunk has `ids`. */
  withIds: boolean
  errors: StatementChunk['errors']
  skipped: number
}

const SEP = '\u001f'
const FIELDS = 10

/** Text that joins and splits back to itself. */
const plain = (s: string | null | undefined) => s == null || (s !== '' && !s.includes(SEP))
const numOf = (n: number) => (Number.isNaN(n) ? null : n)
const textOf = (s: string) => (s === '' ? null : s)

/**
 * Packs a chunk to post to another thread; `unpackChunk` gives it back field for field. A chunk
 * the wire cannot carry (text with SEP or empty, which stands for null; a NaN number, which
 * stands for null too) goes as its objects instead.
 */
export function packChunk(chunk: StatementChunk): WireChunk {
  const { transactions, rows, ids, errors, skipped } = chunk
  const withIds = ids !== undefined
  const out: string[] = []
  const numbers = new Float64Array(transactions.length * 3)
  for (let i = 0; i < transactions.length; i++) {
    const t = transactions[i]!
    if (
      !plain(t.occurredAt) ||
      !plain(t.counterpartyName) ||
      !plain(t.counterpartyPhone) ||
      !plain(t.description) ||
      !plain(t.receiptNumber) ||
      !plain(t.reversalOf) ||
      !plain(ids?.[i]) ||
      !plain(t.kind) ||
      (t.leg !== undefined && t.kind === undefined) ||
      Number.isNaN(t.amount) ||
      Number.isNaN(t.balance)
    ) {
      const count = transactions.length
      return {
        fields: null,
        numbers: null,
        count,
        transactions,
        rows,
        ids,
        withIds,
        errors,
        skipped,
      }
    }
    out.push(
      t.occurredAt,
      t.direction,
      t.counterpartyName ?? '',
      t.counterpartyPhone ?? '',
      t.description,
      t.receiptNumber ?? '',
      t.reversalOf ?? '',
      ids?.[i] ?? '',
      t.kind ?? '',
      t.leg ?? '',
    )
    numbers[i * 3] = rows[i]!
    numbers[i * 3 + 1] = t.amount ?? Number.NaN
    numbers[i * 3 + 2] = t.balance ?? Number.NaN
  }
  const fields = out.join(SEP)
  return { fields, numbers, count: transactions.length, withIds, errors, skipped }
}

/** The chunk `packChunk` packed. */
export function unpackChunk(wire: WireChunk): StatementChunk {
  const { errors, skipped } = wire
  if (wire.fields === null) {
    const { transactions, rows, ids } = wire
    return { transactions: transactions!, rows: rows!, ...(ids ? { ids } : {}), errors, skipped }
  }
  const transactions: ParsedTransaction[] = new Array(wire.count)
  const rows: number[] = new Array(wire.count)
  const ids: string[] | undefined = wire.withIds ? new Array(wire.count) : undefined
  const chunk: StatementChunk = { transactions, rows, ...(ids ? { ids } : {}), errors, skipped }
  if (wire.count === 0) return chunk
  const f = wire.fields.split(SEP)
  const n = wire.numbers!
  for (let k = 0, i = 0; k < wire.count; k++, i += FIELDS) {
    rows[k] = n[k * 3]!
    const t: ParsedTransaction = {
      occurredAt: f[i]!,
      amount: numOf(n[k * 3 + 1]!),
      direction: f[i + 1] as ParsedTransaction['direction'],
      counterpartyName: textOf(f[i + 2]!),
      counterpartyPhone: textOf(f[i + 3]!),
      description: f[i + 4]!,
      receiptNumber: textOf(f[i + 5]!),
      balance: numOf(n[k * 3 + 2]!),
    }
    if (f[i + 6] !== '') t.reversalOf = f[i + 6]!
    if (f[i + 8] !== '') {
      t.kind = f[i + 8] as ParsedTransaction['kind']
      t.leg = f[i + 9]!
    }
    transactions[k] = t
    if (ids) ids[k] = f[i + 7]!
  }
  return chunk
}
