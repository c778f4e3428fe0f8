import { createDarajaTransport, type DarajaConfig, ProviderError } from './daraja-transport.ts'

/** One payment into the shortcode as M-Pesa recorded it (Pull Transactions). */
export interface PulledTransaction {
  receipt: string
  at: Date
  msisdn: string
  billReference: string
  amount: number
}

/**
 * Daraja's Pull Transactions API, the provider's own record of what was paid into the shortcode
 * (48 hours back): `POST /pulltransactions/v1/query` `{ShortCode, StartDate, EndDate,
 * OffSetValue}`, dates `YYYY-MM-DD HH:mm:ss` in Nairobi time → `{ResponseCode: "1000",
 * Response: [[{transactionId, trxDate, msisdn, billreference, amount, ...}]]}`, "1001" with
 * `[[]]` when there is none. Reconciliation finds a push whose answer was lost in it.
 */
export interface DarajaPull {
  transactions(from: Date, to: Date): Promise<PulledTransaction[]>
}

const PAGE = 100
const MAX_PAGES = 50

/** `YYYY-MM-DD HH:mm:ss` in East Africa Time. */
export function eatDateTime(at: Date): string {
  return new Date(at.getTime() + 3 * 3600_000).toISOString().slice(0, 19).replace('T', ' ')
}

/** trxDate: ISO with a zone, or without one (then Nairobi time). */
export function parseTrxDate(v: unknown): Date | null {
  const s = String(v ?? '').trim()
  if (!s) return null
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(s)
  const ms = Date.parse(zoned ? s : `${s.replace(' ', 'T')}+03:00`)
  return Number.isNaN(ms) ? null : new Date(ms)
}

export function createDarajaPull(cfg: DarajaConfig): DarajaPull {
  const { authed, unwrap } = createDarajaTransport(cfg)
  return {
    async transactions(from, to) {
      const out: PulledTransaction[] = []
      for (let page = 0; page < MAX_PAGES; page++) {
        const body = await unwrap(
          authed('/pulltransactions/v1/query', {
            ShortCode: cfg.shortcode,
            StartDate: eatDateTime(from),
            EndDate: eatDateTime(to),
            OffSetValue: String(page * PAGE),
          }),
        )
        const code = String(body.ResponseCode ?? '')
        if (code !== '1000' && code !== '1001')
          throw new ProviderError(
            200,
            code,
            String(body.ResponseMessage ?? 'pull transactions failed'),
          )
        const rows = ((body.Response as unknown[][] | undefined)?.flat() ?? []) as Array<
          Record<string, unknown>
        >
        for (const r of rows) {
          const at = parseTrxDate(r.trxDate)
          if (!r.transactionId || !at) continue
          out.push({
            receipt: String(r.transactionId),
            at,
            msisdn: String(r.msisdn ?? ''),
            billReference: String(r.billreference ?? ''),
            amount: Number(r.amount),
          })
        }
        if (rows.length < PAGE) break
      }
      return out
    },
  }
}
