import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError } from '../kernel/errors.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import { createAccounts } from './c2b-accounts.ts'
import { createC2bCallbacks } from './c2b-callbacks.ts'
import { createC2bPayments } from './c2b-payments.ts'
import { createC2bRequery } from './c2b-requery.ts'
import { createCredentialBox } from './c2b-secrets.ts'
import { createShortcodes, type RegisterBody } from './c2b-shortcodes.ts'
import { createC2bVerifier } from './c2b-verify.ts'
import { assertHttpsCallbacks, createCallbackAuth } from './callback-auth.ts'
import { createCallbacks } from './callbacks.ts'
import type { Daraja } from './daraja.ts'
import type { DarajaBusiness } from './daraja-business.ts'
import { createDeps } from './deps.ts'
import { checkKey, requestHash } from './idempotency.ts'
import { createInitiator } from './initiate.ts'
import { createProviderIndex } from './provider-index.ts'
import { createProviderRequests } from './provider-requests.ts'
import { createQueries } from './queries.ts'
import { createReconciler, reconcileAlerts } from './reconcile.ts'
import { getDisbursement, getPayment } from './rows.ts'
import type { PaymentSettings } from './settings.ts'
import {
  type B2CBody,
  type SimulateC2bBody,
  type StkPushBody,
  validateB2C,
  validateSimulateC2b,
  validateStkPush,
} from './validate.ts'
import { b2cAnswer, stkAnswer } from './views.ts'

export type { ReconcileReport } from './reconcile.ts'
export { type PaymentSettings, providerFromSettings } from './settings.ts'
export type { B2CBody, StkPushBody } from './validate.ts'
export { disbursementView, paymentView } from './views.ts'

/**
 * How often the background passes run (reconciliation, C2B verification retries): about twice
 * per reconciliation window, between every 0.5 s and every 30 s.
 */
export const passEveryMs = (cfg: PaymentSettings) =>
  Math.min(30_000, Math.max(500, (cfg.reconcileAfterS * 1000) / 2))

/** The payment service's logic: everything the routes and the reconciliation job call. */
export function createPayments(
  ctx: ServiceContext<PaymentSettings>,
  opts: { provider?: Daraja; business?: DarajaBusiness } = {},
) {
  const deps = createDeps(ctx, opts.provider, opts.business)
  const auth = createCallbackAuth(deps.cfg)
  const index = createProviderIndex(deps)
  const initiate = createInitiator(deps, index)
  const callbacks = createCallbacks(deps, auth, index)
  const queries = createQueries(deps, index)
  const reconcile = createReconciler(deps, index, callbacks)
  const accounts = createAccounts(deps)
  const box = createCredentialBox(deps.cfg.callbackSecret)
  const shortcodes = createShortcodes(deps, auth, box)
  const verifier = createC2bVerifier(deps, accounts, box)
  const requests = createProviderRequests(deps, auth, { verify: verifier.onResult })
  const c2b = createC2bCallbacks(deps, auth, accounts, verifier, requests)
  const requeryC2b = createC2bRequery(deps, verifier, requests.ask, 2 * passEveryMs(deps.cfg))
  const c2bPayments = createC2bPayments(deps)

  /** Registers a C2B shortcode; the operator without a tenant registers an aggregator paybill. */
  const registerShortcode = (actor: Actor, body: RegisterBody, idemKey?: string | null) =>
    shortcodes.register(actor, body, checkKey(idemKey), () => {
      const tid = tenantFor(actor, body.tenant_id)
      if (tid !== PLATFORM_TENANT) assertEntitled(ctx.registry, tid, { write: true })
      assertHttpsCallbacks(deps.cfg)
    })
  const rotateShortcode = (actor: Actor, shortcode: string) => {
    assertHttpsCallbacks(deps.cfg)
    return shortcodes.rotate(actor, shortcode)
  }

  /** The tenant's account number on the platform's aggregator paybills, and those paybills. */
  function c2bAccount(actor: Actor, named?: string) {
    const tid = tenantFor(actor, named)
    deps.ctx.registry.assertExists(tid)
    const paybills = deps
      .platform()
      .sqlite.query<{ shortcode: string }, []>(
        "SELECT shortcode FROM c2b_shortcodes WHERE mode = 'aggregator' AND status = 'registered' ORDER BY shortcode",
      )
      .all()
      .map((r) => r.shortcode)
    return {
      tenant_id: tid,
      account_number: accounts.accountNumberOf(tid),
      paybills,
      simulator: deps.cfg.usingSimulator,
    }
  }

  /**
   * Asks the simulator to act as a customer paying a till or paybill (Daraja's sandbox-only C2B
   * simulate); refused against real Daraja, where customers pay from their phones.
   */
  async function simulateC2b(body: SimulateC2bBody) {
    if (!deps.cfg.usingSimulator)
      throw new AppError('CONFLICT', 'C2B payments can be simulated only against the simulator')
    const input = validateSimulateC2b(body)
    try {
      const r = await deps.business.simulateC2b(input)
      return { status: 'accepted' as const, response_description: r.ResponseDescription }
    } catch (err) {
      throw new AppError('BAD_GATEWAY', `the simulator refused: ${(err as Error).message}`)
    }
  }

  /** Starts an STK push; the answer (202) is the payment's ids and status. */
  async function stkPush(
    actor: Actor,
    given: StkPushBody,
    idemKey: string | null | undefined,
    requestId?: string,
    invoicePayment = false,
  ) {
    const tid = tenantFor(actor, given.tenant_id)
    const body = validateStkPush(given)
    const amount = body.amount
    return (await initiate({
      kind: 'stk',
      tid,
      actorId: actor.userId,
      key: checkKey(idemKey),
      hash: requestHash({ ...body, tenant_id: tid }),
      requestId,
      phone: body.phone_number,
      // Paying the platform's own invoice is how a suspended tenant gets back; it is not metered.
      entitle: () => {
        if (!invoicePayment) assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' })
        assertHttpsCallbacks(deps.cfg)
      },
      insert(db, id, at) {
        db.sqlite
          .query(
            `INSERT INTO payments (id, tenant_id, phone_number, amount_cents, account_reference,
              transaction_desc, status, user_id, purpose, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?, ?)`,
          )
          .run(
            id,
            tid,
            body.phone_number,
            amount * 100,
            body.account_reference,
            body.transaction_desc,
            actor.userId,
            invoicePayment ? 'invoice' : null,
            at,
            at,
          )
        appendAudit(db, {
          tenantId: tid,
          entity: 'payment',
          entityId: id,
          action: 'created',
          fromStatus: null,
          toStatus: 'initiating',
          detail: {
            amount,
            phone_number: body.phone_number,
            account_reference: body.account_reference,
          },
          actor: actor.userId,
          at,
        })
      },
      async call(id) {
        const a = await deps.provider.stkPush({
          phoneNumber: body.phone_number,
          amount,
          accountReference: body.account_reference,
          transactionDesc: body.transaction_desc,
          callbackUrl: auth.callbackUrl('stk', tid, id),
        })
        return { providerId: a.CheckoutRequestID, merchantId: a.MerchantRequestID }
      },
      answer: (db, id) => stkAnswer(getPayment(db, tid, id)!),
    })) as ReturnType<typeof stkAnswer>
  }

  /** Starts a B2C disbursement; the answer (202) is its ids and status. */
  async function b2cPay(
    actor: Actor,
    given: B2CBody,
    idemKey: string | null | undefined,
    requestId?: string,
  ) {
    const tid = tenantFor(actor, given.tenant_id)
    const body = validateB2C(given)
    const amount = body.amount
    return (await initiate({
      kind: 'b2c',
      tid,
      actorId: actor.userId,
      key: checkKey(idemKey),
      hash: requestHash({ ...body, tenant_id: tid }),
      requestId,
      entitle: () => {
        assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' })
        assertHttpsCallbacks(deps.cfg)
      },
      insert(db, id, at) {
        db.sqlite
          .query(
            `INSERT INTO disbursements (id, tenant_id, phone_number, amount_cents, remarks, occasion,
              status, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?)`,
          )
          .run(
            id,
            tid,
            body.phone_number,
            amount * 100,
            body.remarks,
            body.occasion ?? null,
            actor.userId,
            at,
            at,
          )
        appendAudit(db, {
          tenantId: tid,
          entity: 'disbursement',
          entityId: id,
          action: 'created',
          fromStatus: null,
          toStatus: 'initiating',
          detail: { amount, phone_number: body.phone_number },
          actor: actor.userId,
          at,
        })
      },
      async call(id) {
        const a = await deps.provider.b2c({
          originatorConversationId: id,
          phoneNumber: body.phone_number,
          amount,
          remarks: body.remarks,
          occasion: body.occasion ?? '',
          resultUrl: auth.callbackUrl('b2c', tid, id),
          timeoutUrl: auth.callbackUrl('b2c', tid, id, '&timeout=1'),
        })
        return { providerId: a.ConversationID }
      },
      answer: (db, id) => b2cAnswer(getDisbursement(db, tid, id)!),
    })) as ReturnType<typeof b2cAnswer>
  }

  return {
    settings: deps.cfg,
    provider: deps.provider,
    stkPush,
    stkCallback: callbacks.stkCallback,
    b2cPay,
    b2cResult: callbacks.b2cResult,
    ...queries,
    reconcile,
    requeryC2b,
    alerts: () => reconcileAlerts(deps),
    registerShortcode,
    listShortcodes: shortcodes.list,
    releaseShortcode: shortcodes.release,
    rotateShortcode,
    listC2bPayments: c2bPayments.list,
    getC2bPayment: c2bPayments.get,
    c2bAccount,
    simulateC2b,
    c2bValidation: c2b.c2bValidation,
    c2bConfirmation: c2b.c2bConfirmation,
    startProviderRequest: requests.start,
    providerResult: requests.result,
    readProviderRequest: requests.read,
    callbackUrl: auth.callbackUrl,
  }
}

export type Payments = ReturnType<typeof createPayments>
