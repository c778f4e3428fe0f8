import { eq } from 'drizzle-orm'
import { c2bShortcodes } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { appendAudit } from './audit.ts'
import type { PaymentDeps } from './deps.ts'
import type { PaymentSettings } from './settings.ts'
import { type Narrow, selectAll } from './sql-row.ts'

/**
 * C2B shortcodes (tills and paybills) in the platform database: which tenant holds each, and
 * whether it is an aggregator paybill (registered by the operator for the platform: a customer's
 * account number names the tenant).
 */
export type ShortcodeRow = Narrow<
  typeof c2bShortcodes.$inferSelect,
  {
    mode: 'tenant' | 'aggregator'
    responseType: 'Completed' | 'Cancelled'
    status: 'pending' | 'registered' | 'released'
  }
>

/**
 * How a shortcode's confirmations are verified: 'query' (a Transaction Status query with its own
 * initiator, or the platform's on an aggregator paybill and on the simulator, which like Daraja's
 * sandbox answers the platform's initiator for any shortcode) or 'source' (none to query with:
 * only from Safaricom's addresses, and marked unverified).
 */
export const verificationOf = (
  r: Pick<ShortcodeRow, 'mode' | 'initiatorName'>,
  usingSimulator: boolean,
) =>
  r.mode === 'aggregator' || r.initiatorName || usingSimulator
    ? ('query' as const)
    : ('source' as const)

/** Every C2B callback reads its shortcode (bench/c2b.ts): prepared by hand, names from the table. */
const s = sqlNames(c2bShortcodes)
const GET_SQL = `SELECT ${selectAll(c2bShortcodes)} FROM ${s.$} WHERE ${s.shortcode} = ?`

export const getShortcode = (platform: Db, shortcode: string) =>
  platform.sqlite.query<ShortcodeRow, [string]>(GET_SQL).get(shortcode)

/** A shortcode as the API shows it (never its token-bearing URLs). */
export const shortcodeView = (cfg: Pick<PaymentSettings, 'usingSimulator'>, r: ShortcodeRow) => ({
  shortcode: r.shortcode,
  tenant_id: r.tenantId,
  mode: r.mode,
  response_type: r.responseType,
  status: r.status === 'released' ? ('released' as const) : ('registered' as const),
  verification: verificationOf(r, cfg.usingSimulator),
  initiator_name: r.initiatorName,
  registered_at: r.registeredAt,
  released_at: r.releasedAt,
})

/**
 * Claims the shortcode for `row.tenantId` before the provider is called, so two tenants racing
 * for one shortcode cannot both register it: 409 when another tenant holds it (registered, or
 * being registered). Returns the row it replaced, to restore when the provider refuses.
 */
export function claimShortcode(deps: PaymentDeps, row: ShortcodeRow): ShortcodeRow | null {
  const platform = deps.platform()
  return platform.write((orm) => {
    const before = getShortcode(platform, row.shortcode) ?? null
    if (before && before.status !== 'released' && before.tenantId !== row.tenantId)
      throw new Conflict(`shortcode ${row.shortcode} is registered to another tenant`)
    // The whole row replaced (the shortcode is the table's only key).
    const claim = { ...row, status: 'pending', releasedAt: null }
    orm
      .insert(c2bShortcodes)
      .values(claim)
      .onConflictDoUpdate({ target: c2bShortcodes.shortcode, set: claim })
      .run()
    return before
  })
}

/** Puts back the row a claim replaced (or removes the claim when there was none). */
export function restoreShortcode(
  deps: PaymentDeps,
  shortcode: string,
  before: ShortcodeRow | null,
) {
  const platform = deps.platform()
  platform.write((orm) => {
    orm.delete(c2bShortcodes).where(eq(c2bShortcodes.shortcode, shortcode)).run()
    if (before) orm.insert(c2bShortcodes).values(before).run()
  })
}

/** A registered shortcode the actor holds (the operator: any); 404 otherwise. */
export function heldShortcode(deps: PaymentDeps, actor: Actor, shortcode: string): ShortcodeRow {
  const row = getShortcode(deps.platform(), shortcode)
  if (row?.status !== 'registered' || (row.tenantId !== actor.tenantId && !isOperator(actor)))
    throw new NotFound('shortcode', shortcode)
  return row
}

/** The holder's audit row of a change to a shortcode (its own commit). */
export function auditShortcode(
  deps: PaymentDeps,
  change: { row: ShortcodeRow; action: 'released' | 'rotated'; actor: string | null; at: string },
) {
  const { row } = change
  const db = deps.tenantDb(row.tenantId)
  db.write(() =>
    appendAudit(db, {
      tenantId: row.tenantId,
      entity: 'c2b_shortcode',
      entityId: row.shortcode,
      action: change.action,
      fromStatus: 'registered',
      toStatus: change.action === 'released' ? 'released' : 'registered',
      detail: { shortcode: row.shortcode },
      actor: change.actor,
      at: change.at,
    }),
  )
}
