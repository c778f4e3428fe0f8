import { Elysia } from 'elysia'
import { darajaError } from './model.ts'
import { readJsonBody } from './rules.ts'
import type { Sim } from './sim.ts'

/**
 * Test helpers (not part of Daraja): what the simulator received and decided, and its fault
 * switch. `GET /simulator/requests/{id}` one request, `GET /simulator/requests` the recent ones,
 * `GET /simulator/received?phone=&kind=` every request accepted for a phone across restarts,
 * `POST /simulator/faults` `{"transaction_status": n}`.
 */
export function inspectRoutes(sim: Sim) {
  const { store } = sim
  return (
    new Elysia({ name: 'mmp-simulator-inspect' })
      .get('/simulator/requests/:id', ({ params }) => {
        for (const kind of ['stk', 'b2c', 'c2b', 'status', 'balance', 'reversal'] as const) {
          const rec = store.recall(kind, params.id)
          if (rec) return rec
        }
        return darajaError(404, '404.001.01', 'Resource not found')
      })
      .get('/simulator/received', ({ query }) => {
        const rows = store.received(String(query.phone ?? ''), String(query.kind ?? ''))
        return { count: rows.length, requests: rows }
      })
      // Test switch: `{"transaction_status": n}` answers the next n Transaction Status 503.
      .post('/simulator/faults', async ({ request }) => {
        const body = await readJsonBody(request)
        if (body instanceof Response) return body
        const n = Number(body.transaction_status ?? 0)
        sim.faults.status = Number.isInteger(n) && n >= 0 ? n : 0
        return { transaction_status: sim.faults.status }
      })
      .get('/simulator/requests', () => ({
        stk: store.recent('stk'),
        b2c: store.recent('b2c'),
        c2b: store.recent('c2b'),
      }))
  )
}
