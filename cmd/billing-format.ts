import type { Plan, UsageStats } from '../schema/peers.ts'

/** Human output of `mmp billing …` (with --json the API's answer is printed as is). */

const kes = (n: number) =>
  `KES ${n.toLocaleString('en-KE', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '-')
const limit = (n: number | null) => (n === null ? 'no limit' : n.toLocaleString('en-KE'))

/** Rows as aligned columns, the header first. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}

export function formatPlans(plans: Plan[]): string {
  return table(
    [
      'plan',
      'name',
      'tier',
      'price a month',
      'transactions',
      'statements',
      'users',
      'webhooks',
      'features',
    ],
    plans.map((p) => [
      p.id,
      p.name,
      p.tier,
      kes(p.price),
      limit(p.limits.transactions),
      limit(p.limits.statements),
      limit(p.limits.users),
      limit(p.limits.webhook_endpoints),
      Object.entries(p.features)
        .filter(([, on]) => on)
        .map(([f]) => f)
        .join(', ') || '-',
    ]),
  )
}

export interface SubscriptionOut {
  tenant_id: string
  plan: string
  status: string
  current_period_start: string
  current_period_end: string
  grace_period_ends: string | null
  credit: number
}

export function formatSubscription(s: SubscriptionOut): string {
  const lines = [
    `${s.tenant_id}: ${s.plan} plan, ${s.status}`,
    `period: ${day(s.current_period_start)} to ${day(s.current_period_end)}`,
  ]
  if (s.grace_period_ends) lines.push(`grace period ends: ${day(s.grace_period_ends)}`)
  if (s.credit) lines.push(`credit carried to the next invoice: ${kes(s.credit)}`)
  return lines.join('\n')
}

export function formatUsage(u: UsageStats): string {
  const head = `${u.tenant_id}: ${u.plan} plan, ${u.status}, period ${day(u.period_start)} to ${day(u.period_end)}`
  const rows = Object.entries(u.metrics).map(([metric, m]) => [
    metric.replaceAll('_', ' '),
    m.used === null ? 'counted elsewhere' : m.used.toLocaleString('en-KE'),
    limit(m.limit),
  ])
  return `${head}\n${table(['metric', 'used', 'limit'], rows)}`
}

export interface InvoiceOut {
  id: string
  number: string
  status: string
  plan: string
  period_start: string
  period_end: string
  total: number
  due_at: string
  paid_at: string | null
}

export function formatInvoices(tenant: string, invoices: InvoiceOut[]): string {
  if (invoices.length === 0) return `${tenant} has no invoices yet`
  return table(
    ['number', 'id', 'status', 'plan', 'period', 'total', 'due', 'paid'],
    invoices.map((i) => [
      i.number,
      i.id,
      i.status,
      i.plan,
      `${day(i.period_start)} to ${day(i.period_end)}`,
      kes(i.total),
      day(i.due_at),
      day(i.paid_at),
    ]),
  )
}

export interface CycleReportOut {
  at: string
  invoices: string[]
  renewed: string[]
  past_due: string[]
  suspended: string[]
}

export function formatCycle(r: CycleReportOut): string {
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none')
  return [
    `billing cycle as of ${r.at}`,
    `invoices issued: ${list(r.invoices)}`,
    `subscriptions renewed: ${list(r.renewed)}`,
    `now past due: ${list(r.past_due)}`,
    `suspended: ${list(r.suspended)}`,
  ].join('\n')
}
