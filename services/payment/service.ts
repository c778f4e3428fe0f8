import { and, asc, eq } from 'drizzle-orm'
import { c2bShortcodes } from '../../schema/payment/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError } from '../kernel/errors.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
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
import { checkKey } from './idempotency.ts'
import { createInitiator } from './initiate.ts'
import { createProviderIndex } from './provider-index.ts'
import { createProviderRequests } from './provider-requests.ts'
import { createQueries } from './queries.ts'
import { createReconciler, reconcileAlerts } from './reconcile.ts'
import type { PaymentSettings } from './settings.ts'
import { type StartInput, startB2c, startStkPush } from './start.ts'
import {
  type B2CBody,
  type SimulateC2bBody,
  type StkPushBody,
  validateSimulateC2b,
} from './validate.ts'

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
  const c2b = createC2bCallbacks({ deps, auth, accounts, verifier, requests })
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
    const s = c2bShortcodes
    const paybills = deps
      .platform()
      .orm.select({ shortcode: s.shortcode })
      .from(s)
      .where(and(eq(s.mode, 'aggregator'), eq(s.status, 'registered')))
      .orderBy(asc(s.shortcode))
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

  const starting = { deps, auth, initiate }
  /** Starts an STK push (start.ts); the answer (202) is the payment's ids and status. */
  const stkPush = (input: StartInput<StkPushBody> & { invoicePayment?: boolean }) =>
    startStkPush(starting, input)
  /** Starts a B2C disbursement (start.ts); the answer (202) is its ids and status. */
  const b2cPay = (input: StartInput<B2CBody>) => startB2c(starting, input)

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
