import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { timeZoneOf } from './import-statement.ts'
import type { IngestAnswer } from './model.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { readJsonRow } from './rows.ts'
import { parseSms } from './sms.ts'
import { type Source, storeTransactions } from './store.ts'

type IngestResult = IngestAnswer

type Item = { transaction: ParsedTransaction; ref: { index: number }; derived?: boolean }

function store({
  ctx,
  input,
  items,
  errors,
  skipped,
}: {
  ctx: ServiceContext
  input: { tenantId: string; userId: string; source: Source; demo?: boolean }
  items: Item[]
  errors: RowError[]
  skipped: number
}): IngestResult {
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
  const now = ctx.clock.now().getTime()
  input.rows.forEach((row, index) => {
    const r = readJsonRow(row, index, now)
    if (r.ok) items.push({ transaction: r.transaction, ref: { index } })
    else errors.push(r.error)
  })
  const { tenantId, userId, source, demo } = input
  return store({
    ctx,
    input: { tenantId, userId, source, demo: demo === true },
    items,
    errors,
    skipped: 0,
  })
}

/** The charge a message states, as the 'charge' leg of the message's receipt. */
function chargeLeg(t: ParsedTransaction, cents: number): ParsedTransaction {
  return {
    ...t,
    amount: cents,
    direction: 'out',
    description: `Transaction cost: ${t.description}`,
    balance: null,
    kind: 'charge',
    leg: 'charge',
    reversalOf: undefined,
  }
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
    if (r.ok) {
      items.push({ transaction: r.transaction, ref: { index } })
      // The transaction cost the message states is a leg of its receipt of its own (DESIGN §16).
      if (r.charge) {
        items.push({
          transaction: chargeLeg(r.transaction, r.charge),
          ref: { index },
          derived: true,
        })
      }
    } else if (r.skipped) skipped++
    else errors.push({ index, message: r.message })
  })
  const { tenantId, userId } = input
  return store({ ctx, input: { tenantId, userId, source: 'sms' }, items, errors, skipped })
}
