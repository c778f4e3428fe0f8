import { and, asc, eq, isNull, lte, type SQL } from 'drizzle-orm'
import { paymentIndex } from '../../schema/payment/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { PaymentDeps } from './deps.ts'
import type { Kind } from './rows.ts'

export type IndexRow = Pick<
  typeof paymentIndex.$inferSelect,
  'ref' | 'tenantId' | 'providerId' | 'createdAt'
> & { kind: Kind }

/**
 * Every push adds its row and records the provider's id, every callback asks whose it is
 * (bench/payment.ts): prepared by hand, each name taken from the table.
 */
const x = sqlNames(paymentIndex)
const ADD_SQL = `INSERT INTO ${x.$} (${x.ref}, ${x.kind}, ${x.tenantId}, ${x.open}, ${x.createdAt},
  ${x.updatedAt}) VALUES (?, ?, ?, 1, ?, ?)`
const PROVIDER_ID_SQL = `UPDATE ${x.$} SET ${x.providerId} = ?, ${x.updatedAt} = ? WHERE ${x.ref} = ?`
const TENANT_OF_SQL = `SELECT ${selectList(paymentIndex, ['tenantId'])} FROM ${x.$}
  WHERE ${x.providerId} = ? OR ${x.ref} = ? LIMIT 1`

/**
 * The platform index: which tenant a payment or disbursement belongs to, by our ref and by the
 * provider's id, and whether it is still open (what reconciliation scans).
 */
export function createProviderIndex(deps: PaymentDeps) {
  const run = (sql: string, ...args: (string | number)[]) => {
    const db = deps.platform()
    db.write(() => db.sqlite.query(sql).run(...args))
  }
  const t = paymentIndex
  /** Open rows matching `where`, oldest first (the reconciliation job's scans). */
  const openRows = (where: SQL | undefined, limit: number): IndexRow[] =>
    deps
      .platform()
      .orm.select({
        ref: t.ref,
        kind: t.kind,
        tenantId: t.tenantId,
        providerId: t.providerId,
        createdAt: t.createdAt,
      })
      .from(t)
      .where(and(eq(t.open, 1), where))
      .orderBy(asc(t.createdAt))
      .limit(limit)
      .all() as IndexRow[]
  return {
    add(ref: string, kind: Kind, tid: string, at: string): void {
      run(ADD_SQL, ref, kind, tid, at, at)
    },
    setProviderId(ref: string, providerId: string): void {
      run(PROVIDER_ID_SQL, providerId, deps.nowIso(), ref)
    },
    close(refs: string[]): void {
      if (refs.length === 0) return
      const db = deps.platform()
      const updatedAt = deps.nowIso()
      db.write((orm) => {
        for (const ref of refs)
          orm.update(t).set({ open: 0, updatedAt }).where(eq(t.ref, ref)).run()
      })
    },
    /** The tenant of a provider id or of our ref (the operator reads any tenant's payments). */
    tenantOf(idOrRef: string): string | null {
      return (
        deps
          .platform()
          .sqlite.query<Pick<IndexRow, 'tenantId'>, [string, string]>(TENANT_OF_SQL)
          .get(idOrRef, idOrRef)?.tenantId ?? null
      )
    },
    /** Open rows the provider's id was never recorded for (their answer may have been lost). */
    unanswered(limit = 1000): IndexRow[] {
      return openRows(isNull(t.providerId), limit)
    },
    /** Open rows created at or before `cutoff`, oldest first. */
    open(cutoff: string, limit = 1000): IndexRow[] {
      return openRows(lte(t.createdAt, cutoff), limit)
    },
  }
}

export type ProviderIndex = ReturnType<typeof createProviderIndex>
