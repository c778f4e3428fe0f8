import type { Rfm, Segment } from '../../schema/analytics/views.ts'

/** What RFM scoring reads of a counterparty's totals (customers.ts CounterpartyTotals). */
export interface RfmInput {
  key: string
  last_seen: string
  count: number
  /** Volume in cents, in and out. */
  total: number
}

/**
 * RFM scores 1–5 by percentile rank among all the tenant's counterparties (ties share a score):
 * recency (more recent scores higher), frequency (count) and monetary (total volume).
 */
export function scoreRfm(customers: readonly RfmInput[], nowMs: number): Map<string, Rfm> {
  const recency = customers.map((c) => Math.max(0, (nowMs - Date.parse(c.last_seen)) / 86_400_000))
  const rScore = quintiles(recency.map((d) => -d))
  const fScore = quintiles(customers.map((c) => c.count))
  const mScore = quintiles(customers.map((c) => c.total))
  const out = new Map<string, Rfm>()
  customers.forEach((c, i) => {
    const r = rScore[i]!
    const f = fScore[i]!
    out.set(c.key, {
      recency_days: Math.floor(recency[i]!),
      r,
      f,
      m: mScore[i]!,
      segment: segmentOf(r, f, c.count),
    })
  })
  return out
}

function quintiles(values: readonly number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  const bound = (v: number, strict: boolean) => {
    let lo = 0
    let hi = n
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (sorted[mid]! < v || (!strict && sorted[mid] === v)) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return values.map((v) => {
    const below = bound(v, true)
    const equal = bound(v, false) - below
    const pct = (below + equal / 2) / n
    return Math.min(5, Math.max(1, 1 + Math.floor(pct * 5)))
  })
}

function segmentOf(r: number, f: number, count: number): Segment {
  if (r >= 4 && f >= 4) return 'champions'
  if (r >= 3 && f >= 3) return 'loyal'
  if (r >= 4 && count <= 1) return 'new'
  if (r >= 4) return 'potential_loyalists'
  if (r <= 2 && f >= 3) return 'at_risk'
  if (r <= 2) return 'hibernating'
  return 'need_attention'
}
