import { isInvoicePayment, type topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { ingestBatch, recordReportedBalance, recordStatement, SERVICE } from './service.ts'

/**
 * Consumes categorized batches into the tenant's daily series. The kernel drops a malformed
 * message (a retry would not fix it); a storage error throws so the bus retries. A payment of the
 * platform's invoice is not the tenant's cash flow (the categorizer does not pass one on; this
 * holds it for any other publisher too).
 */
export async function subscribeCategorized(
  ctx: ServiceContext,
  topic: typeof topics.transactionsCategorized,
): Promise<void> {
  await subscribe(ctx, SERVICE, topic, (event) => {
    const transactions = event.data.transactions.filter((t) => !isInvoicePayment(t))
    ingestBatch(ctx, { tenantId: event.tenant_id, eventId: event.id, transactions })
  })
}

/** The provider's reported account balance feeds the low-balance alert (DESIGN §8, §9). */
export async function subscribeReportedBalance(
  ctx: ServiceContext,
  topic: typeof topics.balanceReported,
): Promise<void> {
  await subscribe(ctx, SERVICE, topic, (event) => {
    recordReportedBalance(ctx, {
      tenantId: event.tenant_id,
      eventId: event.id,
      balance: event.data.balance,
      reportedAt: event.data.reported_at,
    })
  })
}

/**
 * Each statement import's proof (`mobilemoney.statements.processed`): the latest per tenant is
 * the summary's `data_quality`, and one that does not add up is never called healthy.
 */
export async function subscribeStatementsProcessed(
  ctx: ServiceContext,
  topic: typeof topics.statementsProcessed,
): Promise<void> {
  await subscribe(ctx, SERVICE, topic, (event) => {
    recordStatement(ctx, {
      tenantId: event.tenant_id,
      eventId: event.id,
      statement: event.data,
      occurredAt: event.occurred_at,
    })
  })
}
