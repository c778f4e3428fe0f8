import type { EventEnvelope, TransactionEvent } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import { ingestBatch } from './service.ts'

/**
 * Consumes categorized batches into the tenant's daily series. A malformed message is logged
 * and dropped (a retry would not fix it); a storage error throws so the bus retries.
 */
export async function subscribeCategorized(ctx: ServiceContext, topic: string): Promise<void> {
  await ctx.bus.subscribe(topic, (event: EventEnvelope) => {
    const transactions = (event.data as { transactions?: unknown })?.transactions
    if (
      !isTenantId(event.tenant_id) ||
      typeof event.id !== 'string' ||
      !Array.isArray(transactions)
    ) {
      ctx.log.warn('dropped a categorized message without tenant, id or transactions', {
        event_id: event.id,
      })
      return
    }
    const valid = (transactions as TransactionEvent[]).filter(
      (t) =>
        t &&
        typeof t.transaction_id === 'string' &&
        typeof t.occurred_at === 'string' &&
        typeof t.amount === 'number',
    )
    ingestBatch(ctx, event.tenant_id, event.id, valid)
  })
}
