import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { timeZoneOf } from './import-statement.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { readJsonRow } from './rows.ts'
import { parseSms } from './sms.ts'
import { type Source, storeTransactions } from './store.ts'

export interface IngestResult {
  accepted: number
  duplicates: number
  matched: number
  rejected: number
  skipped: number
  errors: RowError[]
}

type Item = { transaction: ParsedTransaction; ref: { index: number } }

function store(
  ctx: ServiceContext,
  input: { tenantId: string; userId: string; source: Source; demo?: boolean },
  items: Item[],
  errors: RowError[],
  skipped: number,
): IngestResult {
  assertEntitled(ctx.registry, input.tenantId, { write: true })
  const r =
    items.length > 0
      ? storeTransactions(ctx, ctx.registry.tenant('parser', input.tenantId), {
          ...input,
          items,
          checkLimit: true,
        })
      : { accepted: 0, duplicates: 0, matched: 0, rejected: 0, errors: [] }
  return {
    accepted: r.accepted,
    duplicates: r.duplicates,
    matched: r.matched,
    rejected: errors.length + r.rejected,
    skipped,
    errors: [...errors, ...r.errors].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)),
  }
}

/** `POST /parser/transactions`: JSON rows, each checked on its own. */
export function ingestTransactions(
  ctx: ServiceContext,
  input: {
    tenantId: string
    userId: string
    rows: Array<Record<string, unknown>>
    source: Source
    /** Demo rows (services/parser/demo.ts): stored, not metered. */
    demo?: boolean
  },
): IngestResult {
  const items: Item[] = []
  const errors: RowError[] = []
  input.rows.forEach((row, index) => {
    const r = readJsonRow(row, index)
    if (r.ok) items.push({ transaction: r.transaction, ref: { index } })
    else errors.push(r.error)
  })
  const { tenantId, userId, source, demo } = input
  return store(ctx, { tenantId, userId, source, demo: demo === true }, items, errors, 0)
}

/** `POST /parser/sms`: M-Pesa confirmation messages; failure notices are skipped. */
export function ingestSms(
  ctx: ServiceContext,
  input: { tenantId: string; userId: string; messages: string[] },
): IngestResult {
  const timeZone = timeZoneOf(ctx, input.tenantId)
  const now = ctx.clock.now().toISOString()
  const items: Item[] = []
  const errors: RowError[] = []
  let skipped = 0
  input.messages.forEach((text, index) => {
    const r = parseSms(text, timeZone, now)
    if (r.ok) items.push({ transaction: r.transaction, ref: { index } })
    else if (r.skipped) skipped++
    else errors.push({ index, message: r.message })
  })
  const { tenantId, userId } = input
  return store(ctx, { tenantId, userId, source: 'sms' }, items, errors, skipped)
}
