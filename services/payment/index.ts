import { defineService } from '../kernel/context.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'

export default defineService({
  name: 'payment',
  create(ctx) {
    const payments = createPayments(ctx)
    let timer: ReturnType<typeof setInterval> | null = null
    let running: Promise<unknown> | null = null
    return {
      app: createPaymentsApp(ctx, payments),
      start() {
        // Check about twice per reconciliation window, between every 0.5 s and every 30 s.
        const every = Math.min(
          30_000,
          Math.max(500, (payments.settings.reconcileAfterS * 1000) / 2),
        )
        timer = setInterval(() => {
          if (running) return
          running = payments
            .reconcile()
            .catch((err) =>
              ctx.log.warn('reconciliation failed', { error: (err as Error).message }),
            )
            .finally(() => {
              running = null
            })
        }, every)
      },
      async stop() {
        if (timer) clearInterval(timer)
        await running
      },
    }
  },
})
