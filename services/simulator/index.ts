import { createDelivery } from './delivery.ts'
import { withDarajaErrors } from './not-found.ts'
import { createOAuth } from './oauth.ts'
import { type Senders, simulatorApp } from './routes.ts'
import type { SimulatorOptions } from './settings.ts'
import type { Sim } from './sim.ts'
import { createStore } from './store.ts'

/**
 * The Daraja-compatible M-Pesa simulator (DESIGN §8, §11): the same HTTP protocol as Safaricom
 * Daraja (OAuth client credentials, STK push, STK push query, B2C, C2B register URL and simulate,
 * Transaction Status, Account Balance, Reversal) and callbacks shaped like Daraja's. Requests are
 * checked as Daraja documents them (rules.ts) and refused with its error bodies; auth schemes are
 * case-insensitive. STK push and OAuth answer as production does (stk.ts); Pull Transactions
 * lists the payments it completed (pull.ts). The outcome is chosen by the last four digits of the
 * customer's phone number: for STK push every documented result code and the errors Daraja gives
 * before it takes a push (model.ts `outcomeForPhone`, stk.ts; the table is in docs/daraja.md);
 * for B2C 0001 → ResultCode 1, 2001 → 2001, 9999 → no result ever, anything else success.
 *
 * Until `delayMs` has passed the STK query answers Daraja's "still processing" error; after it
 * the query reports the final result, including for 9999 (so reconciliation settles it as a
 * success with no receipt number).
 *
 * Like Daraja, an accepted request is called back even when the process dies in between: the
 * request and its pending callback are committed before the answer is sent, and on start the
 * simulator fires every callback still due (with `statePath`; in memory only without it).
 *
 * Test helpers (not part of Daraja): `GET /simulator/requests/{CheckoutRequestID}` shows what the
 * simulator received (including the CallBackURL) and what it decided; `GET /simulator/requests`
 * lists the recent ones; `GET /simulator/received?phone=&kind=` counts every STK push and B2C
 * request accepted for a phone, across restarts; `POST /simulator/faults`
 * `{"transaction_status": n}` answers the next n Transaction Status requests HTTP 503.
 */
export function createSimulator(opts: SimulatorOptions) {
  const oauth = createOAuth({
    key: opts.consumerKey ?? 'mmp-simulator-key',
    secret: opts.consumerSecret ?? 'mmp-simulator-secret',
  })
  const store = createStore(opts.statePath)
  const delivery = createDelivery()
  const senders: Senders = {}
  const sim: Sim = {
    store,
    delivery,
    delayMs: opts.delayMs,
    production: opts.production ?? false,
    faults: { status: 0 },
    tokenRefused: oauth.tokenRefused,
    schedule: (kind, id, ms) =>
      delivery.later(ms, async () => {
        if (await (senders[kind]?.(id) ?? Promise.resolve(true))) store.done(id)
      }),
  }
  const app = simulatorApp({ sim, senders, oauth, opts })
    .onStart(() => {
      // Callbacks a previous process accepted but did not deliver: Daraja would still send them.
      const now = Date.now()
      for (const row of store.pending())
        sim.schedule(row.kind, row.id, Math.max(0, row.due_at - now))
    })
    .onStop(() => {
      delivery.stop()
      store.close()
    })
  return withDarajaErrors(app)
}
