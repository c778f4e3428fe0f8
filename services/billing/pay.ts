import { invoicePayments } from '../../schema/billing/tables.ts'
import type { PlanTerms } from '../../schema/events.ts'
import type { StkPushAccepted } from '../../schema/peers.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { invalidField } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import type { Actor } from '../kernel/roles.ts'
import { type Billing, iso } from './billing.ts'
import { assertPayable, getInvoiceRow } from './invoices.ts'
import { findPlan } from './plans.ts'
import {
  changePlan,
  ensureSubscription,
  type SubscriptionRow,
  termsOfPlan,
} from './subscriptions.ts'
import { syncEntitlements } from './usage.ts'

interface Forward {
  requestId: string
  deadline?: number | undefined
}

/**
 * A plan change (DESIGN §10). Billing owns the plan: both doors end here — billing's own
 * `POST /subscriptions/upgrade` and the tenant's `PUT /tenants/{id}/upgrade`, which calls it. The
 * subscription changes at once (prorated), entitlements follow, and `subscriptions.changed` tells
 * the tenant service, which moves the tenant to the plan's tier. Asking for the current plan changes
 * nothing and emits nothing. The answer carries the plan's terms and revision, the facts the event
 * carries, so the tenant's door can apply the change without waiting for the event.
 */
export function upgradeSubscription(
  b: Billing,
  o: { tenantId: string; plan: string },
): { sub: SubscriptionRow; terms: PlanTerms | null } {
  const plan = findPlan(b.db, o.plan)
  if (!plan) throw invalidField('plan', `unknown plan '${o.plan}'`)
  const now = b.ctx.clock.now()
  const { created } = ensureSubscription(b, { tenantId: o.tenantId, at: now })
  const changed = changePlan(b, { tenantId: o.tenantId, planId: plan.id, at: now })
  if (created || changed.changed) syncEntitlements(b, o.tenantId, now)
  return { sub: changed.sub, terms: termsOfPlan(plan) }
}

/**
 * Asks the payment service for an STK push of the invoice total, in whole shillings rounded up
 * (Daraja takes no cents). The account reference is the invoice number, not its id: Daraja allows
 * at most 12 characters and an `inv_` id is longer. The payment's success event marks it paid.
 */
export async function payInvoice(
  b: Billing,
  {
    actor,
    invoiceId,
    phoneNumber,
    fwd,
  }: { actor: Actor; invoiceId: string; phoneNumber: string; fwd: Forward },
): Promise<StkPushAccepted> {
  const inv = getInvoiceRow(b, actor, invoiceId)
  assertPayable(inv)
  const amount = Math.ceil(toMajor(inv.totalCents))
  const res = await b.ctx.client.call<StkPushAccepted>('payment', '/api/v1/payments/stkpush', {
    method: 'POST',
    body: {
      tenant_id: inv.tenantId,
      phone_number: phoneNumber,
      amount,
      account_reference: inv.number,
      transaction_desc: 'Invoice',
    },
    token: actor.token,
    requestId: fwd.requestId,
    deadline: fwd.deadline,
    headers: { [PURPOSE_HEADER]: INVOICE_PAYMENT },
  })
  const now = iso(b.ctx.clock.now())
  b.db.write((orm) =>
    orm
      .insert(invoicePayments)
      .values({
        id: newId('pay'),
        invoiceId: inv.id,
        tenantId: inv.tenantId,
        checkoutRequestId: res?.checkout_request_id ?? null,
        amountCents: amount * 100,
        phoneNumber,
        status: 'pending',
        resultDesc: null,
        createdAt: now,
        updatedAt: now,
      })
      .run(),
  )
  return res
}
