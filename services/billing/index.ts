import { defineService } from '../kernel/context.ts'
import { type BillingSettings, createBilling } from './billing.ts'
import { subscribeBilling } from './consumers.ts'
import { runCycle } from './cycle.ts'
import { seedPlans } from './plans.ts'
import { createBillingApp } from './routes.ts'

export default defineService<BillingSettings>({
  name: 'billing',
  create: (ctx) => {
    const b = createBilling(ctx)
    seedPlans(b.db, ctx.clock.now())
    const everyMs = ctx.settings.cycleIntervalS * 1000
    let timer: ReturnType<typeof setTimeout> | null = null
    let failures = 0
    let stopped = false
    /** Runs the cycle; a failure is logged and retried sooner (5 s doubling, up to the interval). */
    const cycle = (): number => {
      try {
        const r = runCycle(b, ctx.clock.now())
        if (r.invoices.length || r.past_due.length || r.suspended.length)
          ctx.log.info('billing cycle', { ...r })
        failures = 0
        return everyMs
      } catch (err) {
        failures++
        const retryMs = Math.min(everyMs, 5000 * 2 ** (failures - 1))
        ctx.log.error('billing cycle failed; retrying', {
          error: (err as Error)?.message,
          failures,
          retry_ms: retryMs,
        })
        return retryMs
      }
    }
    const schedule = (ms: number) => {
      if (stopped || everyMs <= 0) return
      timer = setTimeout(() => schedule(cycle()), ms)
      timer.unref?.()
    }
    return {
      app: createBillingApp(ctx, b),
      async start() {
        await subscribeBilling(b)
        schedule(cycle())
      },
      stop() {
        stopped = true
        if (timer) clearTimeout(timer)
      },
    }
  },
})
