import { isInvoicePayment, type TopicData, type TopicEvent, topics } from '../../schema/events.ts'
import type { EventBus } from '../kernel/bus.ts'
import { handleOnce } from '../kernel/events.ts'
import { subscribe } from '../kernel/subscribe.ts'
import type { TenantOwnership } from '../kernel/tenant-owner.ts'
import type { WebhookDeps } from './deps.ts'
import type { WebhookEvent } from './model.ts'
import { enqueueEvents } from './queue.ts'

type Mapped = Array<{ event: WebhookEvent; data: Record<string, unknown>; key?: string }>

type SourceTopic =
  | typeof topics.transactionsSuccess
  | typeof topics.transactionsFailed
  | typeof topics.transactionsCategorized
  | typeof topics.statementsProcessed
  | typeof topics.subscriptionsChanged
  | typeof topics.balanceLow

/** What each broker topic becomes for webhook receivers (DESIGN §9 sources). */
export const sourceMappings: { [T in SourceTopic]: (data: TopicData<T>) => Mapped } = {
  [topics.transactionsSuccess]: (t) => [
    {
      event: 'payment.success',
      // One payment succeeds once: its checkout request (STK), else its M-Pesa receipt.
      key: t.checkout_request_id ?? t.receipt_number ?? t.transaction_id,
      data: {
        transaction_id: t.transaction_id,
        amount: t.amount,
        phone_number: t.counterparty_phone ?? null,
        ...(t.checkout_request_id ? { checkout_request_id: t.checkout_request_id } : {}),
        receipt_number: t.receipt_number ?? null,
        ...(t.account_reference ? { account_reference: t.account_reference } : {}),
        // Receivers can tell the platform's invoice being paid from the tenant's own income.
        ...(isInvoicePayment(t) ? { purpose: 'invoice' } : {}),
        // How the money moved: 'stk', 'b2c', 'c2b' (a customer paid a till or paybill), 'reversal'.
        ...(t.channel ? { channel: t.channel } : {}),
        ...(t.channel === 'c2b' && t.counterparty_name
          ? { counterparty_name: t.counterparty_name }
          : {}),
        occurred_at: t.occurred_at,
      },
    },
  ],
  [topics.transactionsFailed]: (p) => [
    {
      event: 'payment.failed',
      key: p.checkout_request_id,
      data: {
        checkout_request_id: p.checkout_request_id,
        status: p.status,
        result_code: p.result_code ?? null,
        result_desc: p.result_desc ?? null,
        ...(p.result_message ? { result_message: p.result_message } : {}),
        amount: p.amount,
        phone_number: p.phone_number,
        account_reference: p.account_reference,
      },
    },
  ],
  [topics.transactionsCategorized]: (b) =>
    b.transactions.map((t) => ({
      event: 'transaction.categorized' as const,
      // Categorized again into another category (a new rule) is news; the same outcome is not.
      key: [t.transaction_id, t.category ?? '', t.category_source ?? '', t.rule_id ?? ''].join('|'),
      data: {
        transaction_id: t.transaction_id,
        occurred_at: t.occurred_at,
        amount: t.amount,
        direction: t.direction,
        description: t.description,
        counterparty_name: t.counterparty_name ?? null,
        counterparty_phone: t.counterparty_phone ?? null,
        receipt_number: t.receipt_number ?? null,
        category: t.category ?? null,
        category_confidence: t.category_confidence ?? null,
        category_source: t.category_source ?? null,
        rule_id: t.rule_id ?? null,
      },
    })),
  [topics.statementsProcessed]: (s) => [{ event: 'statement.processed', data: { ...s } }],
  [topics.subscriptionsChanged]: (s) => [{ event: 'subscription.renewed', data: { ...s } }],
  [topics.balanceLow]: (b) => [{ event: 'low.balance.alert', data: { ...b } }],
}

const CONSUMER = 'webhook'

/**
 * Turns one broker event into deliveries for the event's tenant only, exactly once per event id
 * (inbox row and deliveries commit together).
 */
export function consumeEvent<T extends SourceTopic>(
  deps: WebhookDeps,
  topic: T,
  event: TopicEvent<T>,
): string[] {
  const map = sourceMappings[topic] as (data: TopicData<T>) => Mapped
  let touched: string[] = []
  // What names no fact of its own is named by the event that brought it (the same outbox row,
  // replayed, brings the same id).
  const mapped = map(event.data).map((m, i) => ({ ...m, key: m.key ?? `${event.id}#${i}` }))
  handleOnce(deps.db, CONSUMER, event.id, () => {
    touched = enqueueEvents(deps, event.tenant_id, mapped, event.occurred_at).endpoints
  })
  return touched
}

/** A deleted tenant's endpoints go away with their queued deliveries. */
function removeTenant(
  deps: WebhookDeps,
  event: TopicEvent<typeof topics.tenantsChanged>,
): string[] {
  if (event.data.change !== 'deleted') return []
  const ids: string[] = []
  handleOnce(deps.db, CONSUMER, event.id, () => {
    const now = deps.clock.now().toISOString()
    for (const r of deps.db.sqlite
      .query<{ id: string }, [string]>('SELECT id FROM webhook_endpoints WHERE tenant_id = ?')
      .all(event.tenant_id))
      ids.push(r.id)
    deps.db.sqlite.query('DELETE FROM webhook_endpoints WHERE tenant_id = ?').run(event.tenant_id)
    deps.db.sqlite
      .query(
        "UPDATE webhook_deliveries SET status = 'dead', last_error = 'tenant deleted', updated_at = ? WHERE tenant_id = ? AND status = 'pending'",
      )
      .run(now, event.tenant_id)
  })
  return ids
}

export async function subscribeSources(
  bus: EventBus,
  deps: WebhookDeps,
  ownership?: TenantOwnership,
): Promise<void> {
  const on = { bus, log: deps.log, ownership }
  for (const topic of Object.keys(sourceMappings) as SourceTopic[]) {
    await subscribe(on, CONSUMER, topic, (event) => {
      const touched = consumeEvent(deps, topic, event)
      if (touched.length) deps.notify.enqueued(touched)
    })
  }
  await subscribe(on, CONSUMER, topics.tenantsChanged, (event) => {
    for (const id of removeTenant(deps, event)) deps.notify.endpointChanged(id)
  })
}
