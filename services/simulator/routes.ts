import { Elysia } from 'elysia'
import { b2cRoutes } from './b2c.ts'
import { businessRoutes } from './business.ts'
import { c2bRoutes } from './c2b.ts'
import { stkCallbackOf } from './callbacks.ts'
import { inspectRoutes } from './inspect.ts'
import { outcomeForPhone } from './model.ts'
import type { createOAuth } from './oauth.ts'
import { pullRoutes } from './pull.ts'
import type { SimulatorOptions } from './settings.ts'
import type { Sim } from './sim.ts'
import { stkRoutes } from './stk.ts'
import type { Kind } from './store.ts'

/** Who sends the callback of each kind of remembered request; true when nothing is left. */
export type Senders = Partial<Record<Kind, (id: string) => Promise<boolean>>>

/**
 * The simulator's HTTP app: health, OAuth, each Daraja API's route group and the test helpers.
 * Each group that calls back registers its sender in `senders` (sim.schedule reads them).
 */
export function simulatorApp({
  sim,
  senders,
  oauth,
  opts,
}: {
  sim: Sim
  senders: Senders
  oauth: ReturnType<typeof createOAuth>
  opts: SimulatorOptions
}) {
  const shortcode = opts.shortcode ?? '174379'
  const passkey = opts.passkey ?? 'mmp-simulator-passkey'
  const outcomeOf = opts.outcomeOf ?? outcomeForPhone
  const b2c = b2cRoutes(sim, { outcomeOf: opts.outcomeOf })
  const c2b = c2bRoutes(sim)
  const business = businessRoutes(sim)
  senders.stk = (id) => fireStk({ sim, input: id })
  senders.b2c = b2c.fire
  senders.c2b = c2b.fire
  senders.status = (id) => business.fire('status', id)
  senders.balance = (id) => business.fire('balance', id)
  senders.reversal = (id) => business.fire('reversal', id)
  return new Elysia({ name: 'mmp-simulator' })
    .get('/health', () => ({
      service: 'simulator',
      version: opts.version,
      status: 'ok',
      checks: {},
    }))
    .use(oauth.app)
    .use(stkRoutes(sim, { shortcode, passkey, outcomeOf }))
    .use(pullRoutes(sim, shortcode))
    .use(b2c.app)
    .use(c2b.app)
    .use(business.app)
    .use(inspectRoutes(sim))
}

/** Sends an STK push's callback; true when nothing is left to send. */
async function fireStk({ sim, input: id }: { sim: Sim; input: string }): Promise<boolean> {
  const rec = sim.store.recall('stk', id)
  if (!rec) return true
  const { url: to, body } = stkCallbackOf(rec)
  return sim.delivery.post(to, body, rec)
}
