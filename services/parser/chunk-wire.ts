import type { ParsedTransaction } from './parsed.ts'
import type { StatementChunk } from './statement-row.ts'

/**
 * A statement chunk as it crosses from the parsing thread (statement-worker.ts) to the one that
 * stores it: its rows' text fields joined into one string, split again on arrival, and their
 * numbers in one Float64Array. Posting the chunk's objects as they are cost 150-220 ms of
 * structured cloning for a 100,000-row statement, about what parsing it costs; this costs
 * 30-60 ms to pack and 15-20 ms to unpack. Which fields are null goes in the numbers (a mask a
 * row), so no field needs looking at before the join; the joined text is then searched once for
 * a separator a field brought with it.
 */
export interface WireChunk {
  /** FIELDS strings a row joined by SEP, or null: see `transactions`. */
  fields: string | null
  /** Each row's number, amount, balance (NaN for null) and null mask, or null with `fields`. */
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
/** Numbers a row: its number, amount, balance and which of its text fields are null. */
const NUMBERS = 4
/** Bits of the null mask. */
const NO_NAME = 1
const NO_PHONE = 2
const NO_RECEIPT = 4
const NO_REVERSAL = 8
const NO_KIND = 16
const NO_LEG = 32

const numOf = (n: number) => (Number.isNaN(n) ? null : n)

/**
 * Packs a chunk to post to another thread; `unpackChunk` gives it back field for field. A chunk
 * the wire cannot carry (text holding SEP; a NaN number, which stands for null) goes as its
 * objects instead.
 */
export function packChunk(chunk: StatementChunk): WireChunk {
  const { transactions, rows, ids, errors, skipped } = chunk
  const withIds = ids !== undefined
  const out: string[] = new Array(transactions.length * FIELDS)
  const numbers = new Float64Array(transactions.length * NUMBERS)
  const asObjects = (): WireChunk => ({
    fields: null,
    numbers: null,
    count: transactions.length,
    transactions,
    rows,
    ids,
    withIds,
    errors,
    skipped,
  })
  for (let i = 0, f = 0; i < transactions.length; i++, f += FIELDS) {
    const t = transactions[i]!
    if (
      (t.leg !== undefined && t.kind === undefined) ||
      Number.isNaN(t.amount) ||
      Number.isNaN(t.balance)
    )
      return asObjects()
    out[f] = t.occurredAt
    out[f + 1] = t.direction
    out[f + 2] = t.counterpartyName ?? ''
    out[f + 3] = t.counterpartyPhone ?? ''
    out[f + 4] = t.description
    out[f + 5] = t.receiptNumber ?? ''
    out[f + 6] = t.reversalOf ?? ''
    out[f + 7] = ids?.[i] ?? ''
    out[f + 8] = t.kind ?? ''
    out[f + 9] = t.leg ?? ''
    numbers[i * NUMBERS] = rows[i]!
    numbers[i * NUMBERS + 1] = t.amount ?? Number.NaN
    numbers[i * NUMBERS + 2] = t.balance ?? Number.NaN
    numbers[i * NUMBERS + 3] =
      (t.counterpartyName == null ? NO_NAME : 0) |
      (t.counterpartyPhone == null ? NO_PHONE : 0) |
      (t.receiptNumber == null ? NO_RECEIPT : 0) |
      (t.reversalOf == null ? NO_REVERSAL : 0) |
      (t.kind == null ? NO_KIND : 0) |
      (t.leg == null ? NO_LEG : 0)
  }
  const fields = out.join(SEP)
  // Exactly one separator between fields, or some field brought its own.
  let seps = 0
  for (let at = fields.indexOf(SEP); at >= 0; at = fields.indexOf(SEP, at + 1)) seps++
  if (out.length > 0 && seps !== out.length - 1) return asObjects()
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
    const at = k * NUMBERS
    const nulls = n[at + 3]!
    rows[k] = n[at]!
    const t: ParsedTransaction = {
      occurredAt: f[i]!,
      amount: numOf(n[at + 1]!),
      direction: f[i + 1] as ParsedTransaction['direction'],
      counterpartyName: nulls & NO_NAME ? null : f[i + 2]!,
      counterpartyPhone: nulls & NO_PHONE ? null : f[i + 3]!,
      description: f[i + 4]!,
      receiptNumber: nulls & NO_RECEIPT ? null : f[i + 5]!,
      balance: numOf(n[at + 2]!),
    }
    if (!(nulls & NO_REVERSAL)) t.reversalOf = f[i + 6]!
    if (!(nulls & NO_KIND)) {
      t.kind = f[i + 8] as ParsedTransaction['kind']
      if (!(nulls & NO_LEG)) t.leg = f[i + 9]!
    }
    transactions[k] = t
    if (ids) ids[k] = f[i + 7]!
  }
  return chunk
}
