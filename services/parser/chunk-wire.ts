import type { ParsedTransaction } from './parsed.ts'
import type { StatementChunk } from './statement-row.ts'

/**
 * A statement chunk as it crosses from the parsing thread (statement-worker.ts) to the one that
 * stores it: every field of its rows joined into one string, split again on arrival. Posting the
 * chunk's objects as they are cost 150-220 ms of structured cloning for a 100,000-row statement,
 * about what parsing it costs, so the thread would have saved next to nothing.
 */
export interface WireChunk {
  /** FIELDS strings a row joined by SEP ('' for null or absent), or null: see `transactions`. */
  fields: string | null
  count: number
  /** The chunk's transactions as objects, when a text field could not be joined (see `plain`). */
  transactions?: ParsedTransaction[]
  rows?: number[]
  ids?: string[]
  /** Whether the chunk has `ids`. */
  withIds: boolean
  errors: StatementChunk['errors']
  skipped: number
}

const SEP = '\u001f'
const FIELDS = 11

/** Text that joins and splits back to itself: not empty (that stands for null), no SEP. */
const plain = (s: string | null | undefined) => s == null || (s !== '' && !s.includes(SEP))
/** `String(n)` loses the sign of -0 (a "-0.00" cell); `+s` reads every other number back exactly. */
const num = (n: number | null) => (n === null ? '' : Object.is(n, -0) ? '-0' : String(n))
const numOf = (s: string) => (s === '' ? null : +s)
const textOf = (s: string) => (s === '' ? null : s)

/** Packs a chunk to post to another thread; `unpackChunk` gives it back field for field. */
export function packChunk(chunk: StatementChunk): WireChunk {
  const { transactions, rows, ids, errors, skipped } = chunk
  const withIds = ids !== undefined
  const out: string[] = []
  for (let i = 0; i < transactions.length; i++) {
    const t = transactions[i]!
    if (
      !plain(t.occurredAt) ||
      !plain(t.counterpartyName) ||
      !plain(t.counterpartyPhone) ||
      !plain(t.description) ||
      !plain(t.receiptNumber) ||
      !plain(t.reversalOf) ||
      !plain(ids?.[i])
    ) {
      const count = transactions.length
      return { fields: null, count, transactions, rows, ids, withIds, errors, skipped }
    }
    out.push(
      String(rows[i]),
      t.occurredAt,
      num(t.amount),
      t.direction,
      t.counterpartyName ?? '',
      t.counterpartyPhone ?? '',
      t.description,
      t.receiptNumber ?? '',
      num(t.balance),
      t.reversalOf ?? '',
      ids?.[i] ?? '',
    )
  }
  return { fields: out.join(SEP), count: transactions.length, withIds, errors, skipped }
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
  for (let k = 0, i = 0; k < wire.count; k++, i += FIELDS) {
    rows[k] = +f[i]!
    const t: ParsedTransaction = {
      occurredAt: f[i + 1]!,
      amount: numOf(f[i + 2]!),
      direction: f[i + 3] as ParsedTransaction['direction'],
      counterpartyName: textOf(f[i + 4]!),
      counterpartyPhone: textOf(f[i + 5]!),
      description: f[i + 6]!,
      receiptNumber: textOf(f[i + 7]!),
      balance: numOf(f[i + 8]!),
    }
    if (f[i + 9] !== '') t.reversalOf = f[i + 9]!
    transactions[k] = t
    if (ids) ids[k] = f[i + 10]!
  }
  return chunk
}
