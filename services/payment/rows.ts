import type { disbursements, payments } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { meaningOf } from './result-codes.ts'
import type { Narrow, SqlRow } from './sql-row.ts'

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

/** A `payments` row as raw SQL returns it. */
export type PaymentRow = Narrow<SqlRow<typeof payments>, { status: PaymentStatus }>

/** A `disbursements` row as raw SQL returns it. */
export type DisbursementRow = Narrow<SqlRow<typeof disbursements>, { status: PaymentStatus }>

export type Kind = 'stk' | 'b2c'

/** What differs between an STK push and a B2C disbursement where one path serves both. */
export const KINDS = {
  stk: {
    table: 'payments',
    entity: 'payment',
    route: 'stkpush',
    providerCol: 'checkout_request_id',
  },
  b2c: {
    table: 'disbursements',
    entity: 'disbursement',
    route: 'b2c',
    providerCol: 'conversation_id',
  },
} as const

export const getPayment = (db: Db, tid: string, id: string) =>
  db.sqlite
    .query<PaymentRow, [string, string]>('SELECT * FROM payments WHERE tenant_id = ? AND id = ?')
    .get(tid, id)

export const getDisbursement = (db: Db, tid: string, id: string) =>
  db.sqlite
    .query<DisbursementRow, [string, string]>(
      'SELECT * FROM disbursements WHERE tenant_id = ? AND id = ?',
    )
    .get(tid, id)

/** A payment by the provider's CheckoutRequestID or, before the provider answered, by our id. */
export const findPayment = (db: Db, tid: string, checkoutOrId: string) =>
  db.sqlite
    .query<PaymentRow, [string, string, string]>(
      'SELECT * FROM payments WHERE tenant_id = ? AND (checkout_request_id = ? OR id = ?) LIMIT 1',
    )
    .get(tid, checkoutOrId, checkoutOrId)

/** The status and provider id of either kind, for the paths they share. */
export function getEntity(
  db: Db,
  kind: Kind,
  tid: string,
  id: string,
): {
  status: PaymentStatus
  providerId: string | null
  createdAt: string
  owner: string | null
} | null {
  const row = db.sqlite
    .query<
      {
        status: PaymentStatus
        provider_id: string | null
        created_at: string
        owner: string | null
      },
      [string, string]
    >(
      `SELECT status, ${KINDS[kind].providerCol} AS provider_id, created_at, owner
       FROM ${KINDS[kind].table} WHERE tenant_id = ? AND id = ?`,
    )
    .get(tid, id)
  return row
    ? {
        status: row.status,
        providerId: row.provider_id,
        createdAt: row.created_at,
        owner: row.owner,
      }
    : null
}
