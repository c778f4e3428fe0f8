import { migrations } from '../../schema/payment/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createSimulator } from '../simulator/index.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'
import { testPaymentSettings } from './test-settings.ts'

/** Whom a call is made as (a bearer token for this tenant, role and user). */
type Who = Parameters<TestKit['authFor']>[0]

/** An Admin of tenant 'shop', which the kit creates: the caller unless a test names another. */
export const SHOP_ADMIN: Who = { tenantId: 'shop', role: 'Admin' }

/** Where callbacks point unless the app listens: nothing answers there. */
const NOWHERE = 'http://payment.test'

/** An answer of the app: its status and JSON body (`any` by default, as tests read it freely). */
interface Answer<T = Record<string, any>> {
  status: number
  body: T
}

/**
 * The payment service for unit tests against the M-Pesa simulator on a port of its own: a test kit
 * whose settings point at the simulator, tenant 'shop', and the service with its app. Callbacks
 * go nowhere unless `listen`, where the app serves on a port of its own and that is the callback
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
  const base = server ? `http://127.0.0.1:${server.port}` : NOWHERE
  const kit = await createTestKit('payment', {
    migrations,
    settings: testPaymentSettings({ providerUrl: simUrl, callbackBase: base, ...opts.settings }),
  })
  kit.createTenant(SHOP_ADMIN.tenantId)

  /** The service and its app with these settings over the kit's, and calls to it as someone. */
  function serviceWith(over: Partial<PaymentSettings> = {}) {
    const ctx = { ...kit.ctx, settings: { ...kit.ctx.settings, ...over } }
    const payments = createPayments(ctx)
    const app = createPaymentsApp(ctx, payments)
    /** A call to the app as `who`: a POST with `body` as JSON, or a GET without one. */
    async function call<T = Record<string, any>>(
      path: string,
      c: { body?: unknown; who?: Who; method?: string; headers?: Record<string, string> } = {},
    ): Promise<Answer<T>> {
      const res = await app.handle(
        new Request(`${base}${path}`, {
          method: c.method ?? (c.body === undefined ? 'GET' : 'POST'),
          headers: {
            ...(await kit.authFor(c.who ?? SHOP_ADMIN)),
            ...(c.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...c.headers,
          },
          ...(c.body === undefined ? {} : { body: JSON.stringify(c.body) }),
        }),
      )
      return { status: res.status, body: (await res.json()) as T }
    }
    return { payments, app, call }
  }

  const service = serviceWith()
  serve = (r) => service.app.handle(r)
  return {
    kit,
    simUrl,
    /** Where the app is called (and, when it listens, called back). */
    base,
    ...service,
    serviceWith,
    /** What the simulator recorded of a request it received, by its CheckoutRequestID. */
    seenBySimulator: async (checkoutRequestId: string) =>
      (
        (await (await fetch(`${simUrl}/simulator/requests/${checkoutRequestId}`)).json()) as {
          request: Record<string, unknown>
        }
      ).request,
    async cleanup() {
      kit.cleanup()
      await sim.stop()
      server?.stop(true)
    },
  }
}

export type SimulatorKit = Awaited<ReturnType<typeof simulatorKit>>
