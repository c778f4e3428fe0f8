import { defineService } from '../kernel/context.ts'
import { createBilling } from './billing.ts'
import { subscribeBilling } from './consumers.ts'
import { runCycle } from './cycle.ts'
import { seedPlans } from './plans.ts'
import { createBillingApp } from './routes.ts'

export default defineService({
  name: 'billing',
  create: (ctx) => {
    const b = createBilling(ctx)
    seedPlans(b.db, ctx.clock.now())
    const everyMs =
      Number((ctx.settings as Record<string, unknown>)['billing.cycle_interval_s'] ?? 60) * 1000
    let timer: ReturnType<typeof setInterval> | null = null
    const cycle = () => {
      try {
        const r = runCycle(b, ctx.clock.now())
        if (r.invoices.length || r.past_due.length || r.suspended.length)
          ctx.log.info('billing cycle', { ...r })
      } catch (err) {
        ctx.log.error('billing cycle failed', { error: (err as Error).message })
      }
    }
    return {
      app: createBillingApp(ctx, b),
      async start() {
        await subscribeBilling(b)
        cycle()
        if (everyMs > 0) timer = setInterval(cycle, everyMs)
      },
      stop() {
        if (timer) clearInterval(timer)
      },
    }
  },
})
