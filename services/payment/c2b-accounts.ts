import { eq } from 'drizzle-orm'
import { c2bAccounts } from '../../schema/payment/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { PaymentDeps } from './deps.ts'

/** Every aggregator confirmation is routed by it (bench/c2b.ts): prepared by hand, names from the table. */
const a = sqlNames(c2bAccounts)
const ROUTE_SQL = `SELECT ${selectList(c2bAccounts, ['tenantId'])} FROM ${a.$} WHERE ${a.accountNumber} = ?`

/**
 * Account numbers on an aggregator paybill: the number a customer types as the account
 * (`BillRefNumber`) names the tenant. Each tenant gets a 6-digit number on first use, derived from
 * its id (the next free one after a collision) and kept in the platform database, so it never
 * changes. Anything after the digits (`482913#INV7`, `482913 table 4`) is the tenant's own
 * reference and stays in the transaction's account reference.
 */
export function createAccounts(deps: PaymentDeps) {
  const derive = (tid: string): number => {
    const h = new Bun.CryptoHasher('sha256').update(`c2b-account:${tid}`).digest()
    return 100_000 + (h.readUInt32BE(0) % 900_000)
  }

  function accountNumberOf(tid: string): string {
    const platform = deps.platform()
    const t = c2bAccounts
    const read = () =>
      platform.orm
        .select({ accountNumber: t.accountNumber })
        .from(t)
        .where(eq(t.tenantId, tid))
        .get()?.accountNumber
    const known = read()
    if (known) return known
    return platform.write((orm) => {
      const again = read()
      if (again) return again
      const taken = (n: number) =>
        orm
          .select({ n: t.tenantId })
          .from(t)
          .where(eq(t.accountNumber, String(n)))
          .get()
      let n = derive(tid)
      while (taken(n)) n = n >= 999_999 ? 100_000 : n + 1
      orm
        .insert(t)
        .values({ tenantId: tid, accountNumber: String(n), createdAt: deps.nowIso() })
        .run()
      return String(n)
    })
  }

  /** The tenant an account reference names, and the rest of the reference; null when none. */
  function route(billRef: string | null | undefined): { tenantId: string; rest: string } | null {
    const m = /^\s*(\d{6})(?!\d)\s*[#\-/.:_ ]?\s*(.*)$/.exec(billRef ?? '')
    if (!m) return null
    const row = deps
      .platform()
      .sqlite.query<Pick<typeof c2bAccounts.$inferSelect, 'tenantId'>, [string]>(ROUTE_SQL)
      .get(m[1]!)
    return row ? { tenantId: row.tenantId, rest: m[2]!.trim() } : null
  }

  return { accountNumberOf, route }
}

export type Accounts = ReturnType<typeof createAccounts>
