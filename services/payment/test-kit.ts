import { migrations } from '../../schema/payment/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createSimulator } from '../simulator/index.ts'
import type { Daraja } from './daraja.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'

/** Whom a call is made as (a bearer token for this tenant, role and user). */
type Who = Parameters<TestKit['authFor']>[0]

/** An Admin of tenant 'shop', which the kit creates: the caller unless a test names another. */
const SHOP_ADMIN: Who = { tenantId: 'shop', role: 'Admin' }

/** A port where nothing listens: the provider's address when a test fakes it, or none is read. */
const NOBODY = 'http://127.0.0.1:9'

/**
 * Payment settings for unit tests: the simulator's credentials, a fixed callback secret and no
 * source allow-list; each test names where the provider is and where callbacks come back.
 */
function testPaymentSettings(
  over: Pick<PaymentSettings, 'providerUrl' | 'callbackBase'> & Partial<PaymentSettings>,
): PaymentSettings {
  return {
    usingSimulator: true,
    callbackSecret: 'test-secret',
    allowedIps: [],
    c2bSourceIps: [],
    reconcileAfterS: 120,
    production: false,
    c2bVerifyForS: 86400,
    credentials: {
      consumerKey: 'mmp-simulator-key',
      consumerSecret: 'mmp-simulator-secret',
      shortcode: '174379',
      passkey: 'mmp-simulator-passkey',
      initiatorName: 'mmp',
      securityCredential: 'mmp-simulator-credential',
    },
    ...over,
  }
}

/** An answer of the app: its status and JSON body (`any` by default, as tests read it freely). */
interface Answer<T = Record<string, any>> {
  status: number
  body: T
}

/**
 * The payment service for unit tests: a test kit whose settings name the provider (nobody unless
 * `providerUrl`) and where callbacks go (`callbackBase`, where nothing answers unless a test makes
 * it), tenant 'shop', and the service with its app; `provider` stands in for the Daraja client.
 */
export async function paymentKit(
  opts: {
    providerUrl?: string
    callbackBase?: string
    settings?: Partial<PaymentSettings>
    provider?: Daraja
  } = {},
) {
  const base = opts.callbackBase ?? 'http://payment.test'
  const kit = await createTestKit('payment', {
    migrations,
    settings: testPaymentSettings({
      providerUrl: opts.providerUrl ?? NOBODY,
      callbackBase: base,
      ...opts.settings,
    }),
  })
  kit.createTenant(SHOP_ADMIN.tenantId)
  const provider = opts.provider ? { provider: opts.provider } : {}

  /** Headers of a JSON request as `who`. */
  const jsonAs = async (who: Who) => ({
    ...(await kit.authFor(who)),
    'content-type': 'application/json',
  })

  /** The service and its app with these settings over the kit's, and calls to it as someone. */
  function serviceWith(over: Partial<PaymentSettings> = {}) {
    const ctx = { ...kit.ctx, settings: { ...kit.ctx.settings, ...over } }
    const payments = createPayments(ctx, provider)
    const app = createPaymentsApp(ctx, payments)
    /** A call to the app as `who` (with `headers`): a POST with `body` as JSON, else a GET. */
    async function call<T = Record<string, any>>(
      path: string,
      c: { body?: unknown; who?: Who; method?: string; headers?: Record<string, string> } = {},
    ): Promise<Answer<T>> {
      const who = c.who ?? SHOP_ADMIN
      const res = await app.handle(
        new Request(`${base}${path}`, {
          method: c.method ?? (c.body === undefined ? 'GET' : 'POST'),
          headers: {
            ...(c.body === undefined ? await kit.authFor(who) : await jsonAs(who)),
            ...c.headers,
          },
          ...(c.body === undefined ? {} : { body: JSON.stringify(c.body) }),
        }),
      )
      return { status: res.status, body: (await res.json()) as T }
    }
    return { payments, app, call }
  }

  return {
    kit,
    /** Where the app is called (and callbacks point). */
    base,
    ...serviceWith(),
    serviceWith,
    jsonAs,
    cleanup: async () => kit.cleanup(),
  }
}

/**
 * The payment service against the M-Pesa simulator on a port of its own (paymentKit). Callbacks
 * go nowhere unless `listen`: then the app serves on a port of its own, which is the callback
 * base, so the simulator calls it back. `cleanup` stops everything it started.
 */
export async function simulatorKit(
  opts: { delayMs?: number; listen?: boolean; settings?: Partial<PaymentSettings> } = {},
) {
  const sim = createSimulator({ delayMs: opts.delayMs ?? 20, version: 'test' }).listen({
    port: 0,
    hostname: '127.0.0.1',
  })
  const simUrl = `http://127.0.0.1:${sim.server!.port}`
  // The app must listen before the simulator can call it back; the service is made after the kit.
  let serve: (r: Request) => Response | Promise<Response> = () =>
    new Response(null, { status: 503 })
  const server = opts.listen
    ? Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => serve(r) })
    : null
  const k = await paymentKit({
    providerUrl: simUrl,
    ...(server ? { callbackBase: `http://127.0.0.1:${server.port}` } : {}),
    ...(opts.settings ? { settings: opts.settings } : {}),
  })
  serve = (r) => k.app.handle(r)
  return {
    ...k,
    simUrl,
    /** What the simulator recorded of a request it received, by its CheckoutRequestID. */
    seenBySimulator: async (checkoutRequestId: string) =>
      (
        (await (await fetch(`${simUrl}/simulator/requests/${checkoutRequestId}`)).json()) as {
          request: Record<string, unknown>
        }
      ).request,
    async cleanup() {
      k.kit.cleanup()
      await sim.stop()
      server?.stop(true)
    },
  }
}

export type SimulatorKit = Awaited<ReturnType<typeof simulatorKit>>
export type PaymentKit = Awaited<ReturnType<typeof paymentKit>>
