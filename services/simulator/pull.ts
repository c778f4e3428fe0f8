import { Elysia } from 'elysia'
import { darajaError } from './model.ts'
import { readDarajaRequest, type Sim } from './sim.ts'

/**
 * Daraja's Pull Transactions API (reconciliation: the payments into a shortcode in the last 48
 * hours, as M-Pesa recorded them, whether or not their callbacks arrived):
 *
 * - `POST /pulltransactions/v1/register` `{ShortCode, RequestType: "Pull", NominatedNumber,
 *   CallBackURL}` → `{ResponseRefID, ResponseStatus: "1000" | "1001" (already registered),
 *   ShortCode, ResponseDescription}`.
 * - `POST /pulltransactions/v1/query` `{ShortCode, StartDate, EndDate, OffSetValue}` with dates
 *   `YYYY-MM-DD HH:mm[:ss]` in Nairobi time → `{ResponseRefID, ResponseCode: "1000",
 *   ResponseMessage: "Success", Response: [[{transactionId, trxDate, msisdn, sender,
 *   transactiontype, billreference, amount, organizationname}]]}`; none: ResponseCode "1001",
 *   `Response: [[]]`. Errors: 400.001 Invalid ShortCode; a bad token gets the answer every
 *   other API gets (HTTP 404 `404.001.03`; this API's page names it 401.001).
 *
 * The simulator lists the STK payments it completed; it does not ask for the registration first.
 */
export function pullRoutes(sim: Sim, shortcode: string) {
  const registered = new Set<string>()
  const ref = () => Bun.randomUUIDv7()

  /** `YYYY-MM-DD HH:mm[:ss]` in Nairobi time → ms; null when unreadable. */
  const eatMs = (v: unknown): number | null => {
    const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{1,2}):(\d{2})(?::(\d{2,3}))?$/.exec(String(v ?? ''))
    if (!m) return null
    const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as number[]
    const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, Math.min(s ?? 0, 59)) - 3 * 3600_000
    return Number.isNaN(ms) ? null : ms
  }

  /** A Pull request as Daraja checks it: the token, a JSON body, the registered shortcode. */
  const shortcodeRequest = async (request: Request) => {
    const body = await readDarajaRequest({ sim, input: { request } })
    if (body instanceof Response) return body
    const code = String(body.ShortCode ?? '')
    if (code !== shortcode) return darajaError(400, '400.001', 'Invalid ShortCode')
    return { body, code }
  }

  return new Elysia({ name: 'mmp-simulator-pull' })
    .post('/pulltransactions/v1/register', async ({ request }) => {
      const read = await shortcodeRequest(request)
      if (read instanceof Response) return read
      const { code } = read
      const again = registered.has(code)
      registered.add(code)
      return {
        ResponseRefID: ref(),
        ResponseStatus: again ? '1001' : '1000',
        ShortCode: code,
        ResponseDescription: again
          ? 'ShortCode already Registered'
          : 'Shortcode Registered Successfully',
      }
    })
    .post('/pulltransactions/v1/query', async ({ request }) => {
      const read = await shortcodeRequest(request)
      if (read instanceof Response) return read
      const { body, code } = read
      const from = eatMs(body.StartDate)
      const to = eatMs(body.EndDate)
      const offset = Number(body.OffSetValue ?? 0)
      if (from === null || to === null || !Number.isInteger(offset) || offset < 0)
        return darajaError(400, '400.002.02', 'Bad Request - Invalid Request Payload')
      // Up to 48 hours back, and nothing that has not completed yet.
      const start = Math.max(from, Date.now() - 48 * 3600_000)
      const rows = sim.store.ledger({
        shortcode: code,
        from: start,
        to: Math.min(to + 999, Date.now()),
        offset,
      })
      const list = rows.map((r) => ({
        transactionId: r.receipt,
        trxDate: new Date(r.completed_at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        msisdn: Number(r.msisdn),
        sender: 'UNKNOWN',
        transactiontype: 'c2b-pay-bill-debit',
        billreference: r.bill_ref,
        amount: (r.amount / 100).toFixed(2),
        organizationname: 'MMP Simulator',
      }))
      return {
        ResponseRefID: ref(),
        ResponseCode: list.length ? '1000' : '1001',
        ResponseMessage: list.length ? 'Success' : 'No transactions available',
        Response: [list],
      }
    })
}
