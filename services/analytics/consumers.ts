import { isInvoicePayment, type TopicEvent, topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { handleOnce } from '../kernel/events.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { checkpointOffThread } from './checkpoints.ts'
import { type ApplyResult, applyTransactions } from './ingest.ts'
import type { StoredTransaction } from './stored.ts'
import { toStored } from './stored.ts'

export const CONSUMER = 'analytics'

type BatchEvent = TopicEvent<typeof topics.transactionsRaw | typeof topics.transactionsCategorized>

/**
 * Applies one batch message to the tenant's database exactly once (inbox), rows and rollups in the
 * same transaction. Categorized messages insert or update (a category override); raw messages
 * only insert, so a late raw copy never undoes a category. The kernel already dropped messages
 * that do not fit the schema; a row whose time or amount cannot be stored is skipped and logged,
 * so it does not block the rest of its batch forever. A payment of the platform's invoice is not
 * the tenant's income (the categorizer does not pass one on; this holds it for any publisher).
 */
export function consumeTransactions(
  ctx: ServiceContext,
  event: BatchEvent,
  opts: { onlyNew: boolean },
): ApplyResult | null {
  const tenantId = event.tenant_id
  const list = event.data.transactions.filter((t) => !isInvoicePayment(t))
  const zone = timeZone(ctx.registry.placement(tenantId).timezone)
  const rows: StoredTransaction[] = []
  for (const t of list) {
    try {
      rows.push(toStored(tenantId, zone, t))
    } catch (err) {
      ctx.log.warn('skipped an invalid transaction', {
        event_id: event.id,
        transaction_id: t.transaction_id,
        error: (err as Error).message,
      })
    }
  }
  const db = ctx.registry.tenant('analytics', tenantId)
  checkpointOffThread(ctx, db, rows.length)
  let result: ApplyResult | null = null
  handleOnce(db, CONSUMER, event.id, () => {
    result = applyTransactions(db, rows, ctx.clock.now().toISOString(), opts)
  })
  return result
}

export async function subscribeTransactions(ctx: ServiceContext): Promise<void> {
  await subscribe(ctx, CONSUMER, topics.transactionsCategorized, (event) => {
    consumeTransactions(ctx, event, { onlyNew: false })
  })
  await subscribe(ctx, CONSUMER, topics.transactionsRaw, (event) => {
    consumeTransactions(ctx, event, { onlyNew: true })
  })
}
