import { defineService } from '../kernel/context.ts'
import { type Periodic, startPeriodic } from '../kernel/periodic.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments, passEveryMs } from './service.ts'
import type { PaymentSettings } from './settings.ts'

const MAX_BACKOFF_MS = 5 * 60_000

export default defineService<PaymentSettings>({
  name: 'payment',
  create(ctx) {
    const payments = createPayments(ctx)
    const every = passEveryMs(payments.settings)
    let jobs: Periodic[] = []

    /** A background pass; a failure is logged and the next pass waits longer (kernel backoff). */
    const job = (what: string, run: () => Promise<unknown>) =>
      startPeriodic({
        everyMs: every,
        backoff: { initialMs: every * 2, maxMs: MAX_BACKOFF_MS },
        run,
        onFailure: (err, { failures, retryMs }) =>
          ctx.log.warn(`${what} failed; backing off`, {
            error: (err as Error)?.message ?? String(err),
            stack: (err as Error)?.stack,
            failures,
            retry_ms: retryMs,
          }),
      })

    return {
      app: createPaymentsApp(ctx, payments),
      start() {
        // The first passes right away: requests whose answer a crash lost become `unknown` now,
        // and C2B confirmations left unverified by the previous process are asked about again.
        jobs = [
          job('reconciliation', () => payments.reconcile()),
          job('C2B verification retry', () => payments.requeryC2b()),
        ]
      },
      async stop() {
        await Promise.all(jobs.map((j) => j.stop()))
      },
    }
  },
})
