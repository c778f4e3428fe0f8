import { and, eq } from 'drizzle-orm'
import { transactions } from '../../schema/analytics/tables.ts'
import type { Db } from '../kernel/db.ts'
import { addToRollups, refreshCounterparty } from './rollups.ts'
import { counterpartyKey, normalizePhone, type StoredTransaction } from './stored.ts'
import { readStored } from './stored-sql.ts'

/**
 * Masked payers (DESIGN §16): real C2B confirmations mask the phone (`2547 ***** 126`), so a
 * customer is told apart by mask and name (`counterpartyKey`), and becomes the customer of the full
 * number when another channel (a statement, an STK callback) reports it for the same receipt.
 */

/** True when the full number fits the mask (`2547 ***** 678` and `254712345678`). */
export function fitsMask(masked: string, full: string): boolean {
  const m = masked.replace(/\s+/g, '')
  const digits = normalizePhone(full)
  const re = new RegExp(
    `^${m.replace(/\*+/g, (stars) => `\\d{${stars.length > 4 ? '2,6' : stars.length}}`)}$`,
  )
  return !!digits && digits.length === 12 && re.test(digits)
}

/**
 * Another channel's report of a receipt whose row has only the masked phone: when it names the
 * full number that fits the mask, the row takes it (and the customer of that number). `flush`
 * writes pending rollup sums first. True when the row changed.
 */
export function adoptFullPhone(
  db: Db,
  holderId: string,
  row: StoredTransaction,
  flush: () => void,
) {
  if (!row.counterparty_phone || row.counterparty_phone.includes('*')) return false
  const old = readStored(db, row.tenant_id, holderId)
  if (
    !old?.counterparty_phone?.includes('*') ||
    !fitsMask(old.counterparty_phone, row.counterparty_phone)
  )
    return false
  flush()
  const phone = normalizePhone(row.counterparty_phone)
  const next = { ...old, counterparty_phone: phone, counterparty_key: counterpartyKey(null, phone) }
  addToRollups(db, old, -1)
  db.orm
    .update(transactions)
    .set({ counterpartyPhone: next.counterparty_phone, counterpartyKey: next.counterparty_key })
    .where(and(eq(transactions.tenantId, old.tenant_id), eq(transactions.id, old.id)))
    .run()
  addToRollups(db, next, 1)
  refreshCounterparty(db, old)
  return true
}
