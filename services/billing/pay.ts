import { invoicePayments } from '../../schema/billing/tables.ts'
import type { StkPushAccepted } from '../../schema/peers.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { invalidField } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import type { Actor } from '../kernel/roles.ts'
import { type Billing, iso } from './billing.ts'
import { assertPayable, getInvoiceRow } from './invoices.ts'
import { findPlan } from './plans.ts'
import { changePlan, ensureSubscription, type SubscriptionRow } from './subscriptions.ts'
import { syncEntitlements } from './usage.ts'

interface Forward {
  requestId: string
  deadline?: number | undefined
}

/**
 * The second door to a plan change (DESIGN §10): the tenant service applies tier, isolation and
 * features (`PUT /tenants/{id}/upgrade`), then billing applies the change to the subscription at
 * once. The `tenants.changed` event that follows finds the plan already set and does nothing.
 */
export async function upgradeSubscription(
  b: Billing,
  o: Forward & { tenantId: string; plan: string; token: string },
): Promise<SubscriptionRow> {
  if (!findPlan(b.db, o.plan)) throw invalidField('plan', `unknown plan '${o.plan}'`)
  const { sub } = ensureSubscription(b, o.tenantId, b.ctx.clock.now())
  if (sub.planId === o.plan) return sub
  await b.ctx.client.call('tenant', `/api/v1/tenants/${o.tenantId}/upgrade`, {
    method: 'PUT',
    body: { plan: o.plan },
    token: o.token,
    requestId: o.requestId,
    deadline: o.deadline,
  })
  const now = b.ctx.clock.now()
  const changed = changePlan(b, o.tenantId, o.plan, now)
  syncEntitlements(b, o.tenantId, now)
  return changed.sub
}

/**
 * Asks the payment service for an STK push of the invoice total, in whole shillings rounded up
 * (Daraja takes no cents). The account reference is the invoice number, not its id: Daraja allows
 * at most 12 characters and an `inv_` id is longer. The payment's success event marks it paid.
 */
export async function payInvoice(
  b: Billing,
  actor: Actor,
  invoiceId: string,
  phoneNumber: string,
  fwd: Forward,
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
