import { defineService } from '../kernel/context.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'

const MAX_BACKOFF_MS = 5 * 60_000

export default defineService<PaymentSettings>({
  name: 'payment',
  create(ctx) {
    const payments = createPayments(ctx)
    let timer: ReturnType<typeof setTimeout> | null = null
    let running: Promise<unknown> | null = null
    let stopped = false
    // Check about twice per reconciliation window, between every 0.5 s and every 30 s.
    const every = Math.min(30_000, Math.max(500, (payments.settings.reconcileAfterS * 1000) / 2))
    let failures = 0

    /** One pass; a failure is logged and the next pass waits longer. Nothing here may throw. */
    const tick = async () => {
      try {
        await payments.reconcile()
        failures = 0
      } catch (err) {
        failures++
        ctx.log.warn('reconciliation failed; backing off', {
          error: (err as Error)?.message ?? String(err),
          stack: (err as Error)?.stack,
          failures,
        })
      }
    }
    const schedule = (ms: number) => {
      if (stopped) return
      timer = setTimeout(() => {
        running = tick().finally(() => {
          running = null
          schedule(Math.min(MAX_BACKOFF_MS, every * 2 ** failures))
        })
      }, ms)
    }

    return {
      app: createPaymentsApp(ctx, payments),
      start() {
        // The first pass right away: requests whose answer a crash lost become `unknown` now.
        schedule(0)
      },
      async stop() {
        stopped = true
        if (timer) clearTimeout(timer)
        await running
      },
    }
  },
})
