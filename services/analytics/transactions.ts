import type { TransactionView } from '../../schema/analytics/views.ts'
import { CATEGORIES, KINDS, type Kind } from '../../schema/vocabulary.ts'
import { invalidField, NotFound } from '../kernel/errors.ts'
import { toMajor, toMinor } from '../kernel/money.ts'
import { normalizePhone, type StoredTransaction } from './stored.ts'
import { KEYSET, NEWEST_FIRST, readStored, STORED_SELECT, TIME_INDEX, tx } from './stored-sql.ts'
import type { Scope } from './summary.ts'

/** Filters of the transactions list and the export (query strings, validated here). */
export interface TransactionFilters {
  direction?: 'in' | 'out' | undefined
  kind?: string | undefined
  leg?: string | undefined
  category?: string | undefined
  min_amount?: number | undefined
  max_amount?: number | undefined
  phone?: string | undefined
  q?: string | undefined
}

export const VIEW_FIELDS = [
  'id',
  'occurred_at',
  'amount',
  'direction',
  'counterparty_name',
  'counterparty_phone',
  'description',
  'receipt_number',
  'balance',
  'category',
  'category_confidence',
  'category_source',
  'source',
  'user_id',
  'kind',
  'leg',
] as const

export function toView(r: StoredTransaction): TransactionView {
  return {
    id: r.id,
    occurred_at: r.occurred_at,
    amount: toMajor(r.amount_cents),
    direction: r.direction,
    counterparty_name: r.counterparty_name,
    counterparty_phone: r.counterparty_phone,
    description: r.description,
    receipt_number: r.receipt_number,
    balance: r.balance_cents == null ? null : toMajor(r.balance_cents),
    category: r.category,
    category_confidence: r.category_confidence,
    category_source: r.category_source,
    source: r.source,
    user_id: r.user_id,
    kind: r.kind as Kind | null,
    leg: r.leg,
  }
}

/** The keyset position after a row: newest first, ties broken by id. */
interface Cursor {
  at: string
  id: string
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString('base64url')
}

export function decodeCursor(text: string): Cursor {
  try {
    const [at, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
    if (typeof at === 'string' && typeof id === 'string') return { at, id }
  } catch {}
  throw invalidField('cursor', 'is not a cursor this API returned')
}

/** Builds the WHERE clause shared by the list and the export. Every query starts at tenant_id. */
export function whereOf(scope: Scope, f: TransactionFilters): { sql: string; args: unknown[] } {
  const where = [`${tx.tenantId} = ?`]
  const args: unknown[] = [scope.tenantId]
  const add = (clause: string, ...values: unknown[]) => {
    where.push(clause)
    args.push(...values)
  }
  if (scope.range.fromMs !== null)
    add(`${tx.occurredAt} >= ?`, new Date(scope.range.fromMs).toISOString())
  if (scope.range.toMs !== null)
    add(`${tx.occurredAt} < ?`, new Date(scope.range.toMs).toISOString())
  if (scope.userId !== null) add(`${tx.userId} = ?`, scope.userId)
  if (f.direction) add(`${tx.direction} = ?`, f.direction)
  if (f.kind) {
    if (!(KINDS as readonly string[]).includes(f.kind))
      throw invalidField('kind', `must be one of: ${KINDS.join(', ')}`)
    add(`${tx.kind} = ?`, f.kind)
  }
  if (f.leg !== undefined) add(`${tx.leg} = ?`, f.leg)
  if (f.category) {
    // An unknown value would match nothing and read as "no transactions": say what is allowed.
    if (!(CATEGORIES as readonly string[]).includes(f.category))
      throw invalidField('category', `must be one of: ${CATEGORIES.join(', ')}`)
    add(`${tx.category} = ?`, f.category)
  }
  if (f.min_amount !== undefined) add(`${tx.amountCents} >= ?`, toMinor(f.min_amount, 'min_amount'))
  if (f.max_amount !== undefined) add(`${tx.amountCents} <= ?`, toMinor(f.max_amount, 'max_amount'))
  if (f.phone) {
    const digits = normalizePhone(f.phone)
    if (!digits) throw invalidField('phone', 'must be a phone number')
    add(`${tx.counterpartyKey} = ?`, `tel:${digits}`)
  }
  if (f.q) {
    const like = `%${f.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`
    const esc = "ESCAPE '\\'"
    add(
      `(${tx.description} LIKE ? ${esc} OR ${tx.counterpartyName} LIKE ? ${esc} OR ${tx.receiptNumber} LIKE ? ${esc})`,
      like,
      like,
      like,
    )
  }
  return { sql: where.join(' AND '), args }
}

/** One keyset page of stored rows, newest first. */
export function pageOf(
  scope: Scope,
  f: TransactionFilters,
  limit: number,
  after: Cursor | null,
): { rows: StoredTransaction[]; next: Cursor | null } {
  const { sql, args } = whereOf(scope, f)
  const keyset = after ? ` AND ${KEYSET} < (?, ?)` : ''
  if (after) args.push(after.at, after.id)
  const rows = scope.db.sqlite
    .query(
      `SELECT ${STORED_SELECT} FROM ${tx.$} INDEXED BY ${TIME_INDEX} WHERE ${sql}${keyset}
       ${NEWEST_FIRST} LIMIT ?`,
    )
    .all(...(args as never[]), limit + 1) as StoredTransaction[]
  const more = rows.length > limit
  if (more) rows.pop()
  const last = rows[rows.length - 1]
  return { rows, next: more && last ? { at: last.occurred_at, id: last.id } : null }
}

export function listTransactions(
  scope: Scope,
  { f, limit, cursor }: { f: TransactionFilters; limit: number; cursor: string | undefined },
) {
  const page = pageOf(scope, f, limit, cursor ? decodeCursor(cursor) : null)
  return {
    data: page.rows.map(toView),
    next_cursor: page.next ? encodeCursor(page.next) : null,
    has_more: page.next !== null,
  }
}

/** One transaction of the tenant; another tenant's id is a 404 exactly like a missing one. */
export function getTransaction(scope: Pick<Scope, 'db' | 'tenantId'>, id: string): TransactionView {
  const row = readStored(scope.db, scope.tenantId, id)
  if (!row) throw new NotFound('transaction', id)
  return toView(row)
}
