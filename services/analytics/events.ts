import { type EventEnvelope, type TransactionBatch, topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { handleOnce } from '../kernel/events.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import { type ApplyResult, applyTransactions, toStored } from './ingest.ts'
import type { StoredTransaction } from './stored.ts'
import { timeZone } from './time.ts'

export const CONSUMER = 'analytics'

/**
 * Applies one batch message to the tenant's database exactly once (inbox), rows and rollups in the
 * same transaction. Categorized messages insert or update (a category override); raw messages
 * only insert, so a late raw copy never undoes a category. Bad rows are skipped and logged: one
 * malformed transaction must not block the rest of its batch forever.
 */
export function consumeTransactions(
  ctx: ServiceContext,
  event: EventEnvelope,
  opts: { onlyNew: boolean },
): ApplyResult | null {
  const tenantId = event.tenant_id
  if (!isTenantId(tenantId)) {
    ctx.log.warn('dropped an event with an invalid tenant_id', { event_id: event.id })
    return null
  }
  const data = event.data as Partial<TransactionBatch> & { transaction_id?: string }
  const list = Array.isArray(data.transactions)
    ? data.transactions
    : data.transaction_id
      ? [data as never]
      : []
  const zone = timeZone(ctx.registry.placement(tenantId).timezone)
  const rows: StoredTransaction[] = []
  for (const t of list) {
    try {
      rows.push(toStored(tenantId, zone, t))
    } catch (err) {
      ctx.log.warn('skipped an invalid transaction', {
        event_id: event.id,
        transaction_id: (t as { transaction_id?: string })?.transaction_id,
        error: (err as Error).message,
      })
    }
  }
  const db = ctx.registry.tenant('analytics', tenantId)
  let result: ApplyResult | null = null
  handleOnce(db, CONSUMER, event.id, () => {
    result = applyTransactions(db, rows, ctx.clock.now().toISOString(), opts)
  })
  return result
}

export async function subscribeTransactions(ctx: ServiceContext): Promise<void> {
  await ctx.bus.subscribe(topics.transactionsCategorized, (event) => {
    consumeTransactions(ctx, event, { onlyNew: false })
  })
  await ctx.bus.subscribe(topics.transactionsRaw, (event) => {
    consumeTransactions(ctx, event, { onlyNew: true })
  })
}
