import type { Plan } from '../schema/peers.ts'
import type { CliApi } from './client.ts'

/**
 * What `POST /billing/run-cycle` would do as of a time, worked out from the GET routes (tenants,
 * subscriptions, usage, plans, invoices) so the operator sees it before anything changes. An
 * estimate: proration lines are not visible through those routes, and the amount of a period
 * that ends later in the same run uses this period's usage.
 */
export interface CyclePreviewRow {
  tenant: string
  plan: string
  /** Periods that end by `at`: each is invoiced (when it has charges) and renewed. */
  periods: number
  period_end: string
  /** Base fees of those periods plus this period's overage, less credit (KES). */
  estimated_amount: number
  /** Open invoices due before `at`: they and the subscription become past_due. */
  past_due_invoices: string[]
  /** The grace period ends by `at`: the tenant is suspended. */
  suspend: boolean
}

interface Sub {
  plan: string
  status: string
  current_period_end: string
  grace_period_ends: string | null
  credit: number
}
interface Usage {
  metrics: Record<string, { used: number | null; limit: number | null }>
}
interface Inv {
  number: string
  status: string
  due_at: string
}

export async function previewCycle(api: CliApi, at: Date): Promise<CyclePreviewRow[]> {
  const { data: tenants } = await api.call<{ data: Array<{ id: string }> }>(
    'GET',
    '/api/v1/tenants',
  )
  const { data: plans } = await api.call<{ data: Plan[] }>('GET', '/api/v1/billing/plans')
  const planOf = new Map(plans.map((p) => [p.id, p]))
  const rows: CyclePreviewRow[] = []
  for (const { id } of tenants) {
    const sub = await api.call<Sub>('GET', `/api/v1/billing/subscriptions/${id}`)
    if (sub.status === 'canceled') continue
    const periods = periodsEnded(new Date(sub.current_period_end), at)
    const open = await api.call<{ data: Inv[] }>(
      'GET',
      `/api/v1/billing/invoices?tenant_id=${encodeURIComponent(id)}&limit=500`,
    )
    const pastDue = open.data
      .filter((i) => i.status === 'open' && Date.parse(i.due_at) < at.getTime())
      .map((i) => i.number)
    const suspend =
      sub.status === 'past_due' &&
      sub.grace_period_ends !== null &&
      Date.parse(sub.grace_period_ends) <= at.getTime()
    if (periods === 0 && pastDue.length === 0 && !suspend) continue
    let amount = 0
    if (periods > 0) {
      const plan = planOf.get(sub.plan)
      const usage = await api.call<Usage>('GET', `/api/v1/billing/usage/${id}`)
      amount = (plan?.price ?? 0) * periods + overage(plan, usage) - sub.credit
    }
    rows.push({
      tenant: id,
      plan: sub.plan,
      periods,
      period_end: sub.current_period_end,
      estimated_amount: Math.max(0, Math.round(amount * 100) / 100),
      past_due_invoices: pastDue,
      suspend,
    })
  }
  return rows
}

function overage(plan: Plan | undefined, usage: Usage): number {
  if (!plan) return 0
  let sum = 0
  for (const [metric, price] of Object.entries(plan.overage)) {
    const m = usage.metrics[metric]
    if (!m || m.used === null || m.limit === null || price === undefined) continue
    sum += Math.max(0, m.used - m.limit) * price
  }
  return sum
}

/** Calendar months from `end` up to `at` (a period ending exactly at `at` counts). */
function periodsEnded(end: Date, at: Date): number {
  let n = 0
  const day = end.getUTCDate()
  let cursor = end
  while (cursor.getTime() <= at.getTime() && n < 1200) {
    n++
    const next = new Date(cursor.getTime())
    next.setUTCDate(1)
    next.setUTCMonth(next.getUTCMonth() + 1)
    const last = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate()
    next.setUTCDate(Math.min(day, last))
    cursor = next
  }
  return n
}

const kes = (n: number) =>
  `KES ${n.toLocaleString('en-KE', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`

export function formatPreview(rows: CyclePreviewRow[], at: Date): string {
  const lines = [`The billing cycle as of ${at.toISOString()} would:`]
  const w = Math.max(6, ...rows.map((r) => r.tenant.length))
  for (const r of rows) {
    const what: string[] = []
    if (r.periods > 0)
      what.push(
        `invoice ${r.periods} ended period${r.periods > 1 ? 's' : ''} from ${r.period_end.slice(0, 10)} (about ${kes(r.estimated_amount)}) and renew`,
      )
    if (r.past_due_invoices.length) what.push(`mark ${r.past_due_invoices.join(', ')} past due`)
    if (r.suspend) what.push('suspend the tenant (grace period over)')
    lines.push(`  ${r.tenant.padEnd(w)}  ${r.plan.padEnd(10)}  ${what.join('; ')}`)
  }
  const total = rows.reduce((n, r) => n + r.estimated_amount, 0)
  lines.push(
    `${rows.length} tenant${rows.length === 1 ? '' : 's'}, about ${kes(total)} invoiced (proration lines not included)`,
  )
  return lines.join('\n')
}
