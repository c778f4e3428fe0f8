import { defineService } from '../kernel/context.ts'
import { type Periodic, startPeriodic } from '../kernel/periodic.ts'
import { createBilling } from './billing.ts'
import { subscribeBilling } from './consumers.ts'
import { runCycle } from './cycle.ts'
import { seedPlans } from './plans.ts'
import { createBillingApp } from './routes.ts'
import type { BillingSettings } from './settings.ts'

export default defineService<BillingSettings>({
  name: 'billing',
  create: (ctx) => {
    const b = createBilling(ctx)
    seedPlans(b.db, ctx.clock.now())
    const everyMs = ctx.settings.cycleIntervalS * 1000
    let job: Periodic | undefined
    /** Runs the cycle; a failure is logged and retried sooner (5 s doubling, up to the interval). */
    const cycle = () => {
      const r = runCycle(b, ctx.clock.now())
      if (r.invoices.length || r.past_due.length || r.suspended.length)
        ctx.log.info('billing cycle', { ...r })
    }
    return {
      app: createBillingApp(ctx, b),
      async start() {
        await subscribeBilling(b)
        job = startPeriodic({
          everyMs,
          run: cycle,
          backoff: { initialMs: 5000, maxMs: everyMs },
          onFailure: (err, { failures, retryMs }) =>
            ctx.log.error('billing cycle failed; retrying', {
              error: (err as Error)?.message,
              failures,
              retry_ms: retryMs,
            }),
        })
      },
      async stop() {
        await job?.stop()
      },
    }
  },
})
