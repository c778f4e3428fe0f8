import { disbursements, payments } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { meaningOf } from './result-codes.ts'
import { type Narrow, selectAll } from './sql-row.ts'

/**
 * initiating → pending → success | failed | cancelled | timeout. `unknown`: the provider may have
 * received the request but its answer was never recorded (a crash, a timeout after sending); the
 * callback or a provider query settles it, never a guess.
 */
export type PaymentStatus =
  | 'initiating'
  | 'pending'
  | 'unknown'
  | 'success'
  | 'failed'
  | 'cancelled'
  | 'timeout'
export type FinalStatus = Exclude<PaymentStatus, 'initiating' | 'pending' | 'unknown'>

/** Statuses a callback, a result or a query may still settle. */
export const OPEN: ReadonlySet<string> = new Set(['initiating', 'pending', 'unknown'])

/** Daraja result code → our status (the one table: result-codes.ts). */
export const statusOfResult = (code: number): FinalStatus => meaningOf(code).status

/** A `payments` row, its status narrowed to the state machine's. */
export type PaymentRow = Narrow<typeof payments.$inferSelect, { status: PaymentStatus }>

/** A `disbursements` row, its status narrowed to the state machine's. */
export type DisbursementRow = Narrow<typeof disbursements.$inferSelect, { status: PaymentStatus }>

export type Kind = 'stk' | 'b2c'

/**
 * The SQL names of the two tables, for the statements every push and callback runs
 * (bench/payment.ts): written by hand, each name taken from the table.
 */
const P = sqlNames(payments)
const D = sqlNames(disbursements)

/** What differs between an STK push and a B2C disbursement where one path serves both. */
export const KINDS = {
  stk: { names: P, entity: 'payment', route: 'stkpush' },
  b2c: { names: D, entity: 'disbursement', route: 'b2c' },
} as const

/** A statement both kinds run, written once over the names of either table. */
export const byKind = (sql: (n: typeof P | typeof D) => string): Record<Kind, string> => ({
  stk: sql(P),
  b2c: sql(D),
})

const GET_PAYMENT_SQL = `SELECT ${selectAll(payments)} FROM ${P.$} WHERE ${P.tenantId} = ? AND ${P.id} = ?`
const GET_DISBURSEMENT_SQL = `SELECT ${selectAll(disbursements)} FROM ${D.$} WHERE ${D.tenantId} = ? AND ${D.id} = ?`
const FIND_PAYMENT_SQL = `SELECT ${selectAll(payments)} FROM ${P.$}
  WHERE ${P.tenantId} = ? AND (${P.checkoutRequestId} = ? OR ${P.id} = ?) LIMIT 1`
const entitySql = (n: typeof P | typeof D, providerCol: string) =>
  `SELECT ${n.status} AS status, ${providerCol} AS providerId, ${n.createdAt} AS createdAt,
    ${n.owner} AS owner FROM ${n.$} WHERE ${n.tenantId} = ? AND ${n.id} = ?`
const ENTITY_SQL = { stk: entitySql(P, P.checkoutRequestId), b2c: entitySql(D, D.conversationId) }

export const getPayment = (db: Db, tid: string, id: string) =>
  db.sqlite.query<PaymentRow, [string, string]>(GET_PAYMENT_SQL).get(tid, id)

export const getDisbursement = (db: Db, tid: string, id: string) =>
  db.sqlite.query<DisbursementRow, [string, string]>(GET_DISBURSEMENT_SQL).get(tid, id)

/** A payment by the provider's CheckoutRequestID or, before the provider answered, by our id. */
export const findPayment = (db: Db, tid: string, checkoutOrId: string) =>
  db.sqlite
    .query<PaymentRow, [string, string, string]>(FIND_PAYMENT_SQL)
    .get(tid, checkoutOrId, checkoutOrId)

/** The status and provider id of either kind, for the paths they share. */
export function getEntity(db: Db, kind: Kind, tid: string, id: string): EntityState | null {
  return db.sqlite.query<EntityState, [string, string]>(ENTITY_SQL[kind]).get(tid, id)
}

/** Either kind's state as `getEntity` reads it: the columns both tables share. */
type EntityState = Pick<typeof payments.$inferSelect, 'createdAt' | 'owner'> & {
  status: PaymentStatus
  providerId: string | null
}
