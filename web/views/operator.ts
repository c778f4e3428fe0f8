import { api, Problem, pickTenant } from '../api.ts'
import { day, h, money, num, section, showError, table } from '../ui.ts'
import { moneyPanel } from './operator-money.ts'
import { field, formWith } from './settings-form.ts'
import { inviteLink } from './settings-users.ts'

interface TenantRow {
  id: string
  name: string
  plan: string
  isolation: string
  status: string
  timezone: string
  created_at: string
}

/**
 * The platform operator's start page: every tenant (GET /api/v1/tenants) with a button that opens
 * its dashboard; the operator then sees that tenant's pages through `?tenant_id=`.
 */
const FIGURES_FOR = 50

/**
 * Each tenant's all-time count and net, filled in as the summaries arrive (the first
 * FIGURES_FOR tenants only: one request each).
 */
function tenantFigures() {
  const cells = new Map<string, { count: HTMLElement; net: HTMLElement }>()
  return (id: string) => {
    let c = cells.get(id)
    if (!c) {
      c = { count: h('span', {}, '…'), net: h('span', {}, '…') }
      cells.set(id, c)
      const mine = c
      if (cells.size > FIGURES_FOR) {
        mine.count.textContent = '—'
        mine.net.textContent = '—'
      } else
        api
          .get<{ total_transactions: number; net: number }>(
            `/api/v1/analytics/summary?tenant_id=${encodeURIComponent(id)}`,
          )
          .then(
            (s) => {
              mine.count.textContent = num(s.total_transactions)
              mine.net.textContent = money(s.net)
            },
            (err: { status?: number }) => {
              mine.count.textContent = `— (${err.status ?? 'error'})`
              mine.net.textContent = '—'
            },
          )
    }
    return c
  }
}

interface Plan {
  id: string
  name: string
  price: number
}

/** A long operator action the platform answered 202 for (GET /tenants/{id}/jobs/{job}). */
interface Job {
  id: string
  kind: string
  tenant_id: string
  status: 'running' | 'succeeded' | 'failed'
  result: unknown
  error: { status: number; code: string; detail: string } | null
}
const isJob = (x: unknown): x is Job =>
  typeof x === 'object' &&
  x !== null &&
  typeof (x as Job).kind === 'string' &&
  String((x as Job).id).startsWith('job_')

/**
 * What an action ended with: its answer, or for a 202 its job, asked about every second (the
 * answer's Retry-After) with `progress` told how long it has run; a failed job throws its problem
 * as the request would have.
 */
async function outcomeOf<T>(answer: T | Job, progress: (seconds: number) => void): Promise<T> {
  if (!isJob(answer)) return answer
  const started = Date.now()
  let job = answer
  while (job.status === 'running') {
    progress(Math.round((Date.now() - started) / 1000))
    await new Promise((resolve) => setTimeout(resolve, 1000))
    job = await api.get<Job>(
      `/api/v1/tenants/${encodeURIComponent(job.tenant_id)}/jobs/${encodeURIComponent(job.id)}`,
    )
  }
  if (job.status === 'failed') {
    const e = job.error ?? { status: 500, code: 'INTERNAL', detail: 'the log says why' }
    throw new Problem({
      status: e.status,
      title: 'The move failed',
      detail: e.detail,
      code: e.code,
    })
  }
  return job.result as T
}

/**
 * The plan of one tenant as a select that upgrades or downgrades it (PUT tenants/{id}/upgrade);
 * a move that takes long is answered 202 and followed, its progress shown until it ends.
 */
function planControl(t: TenantRow, plans: Plan[], done: (text: string) => void): HTMLElement {
  const select = h(
    'select',
    { 'aria-label': `Plan of ${t.name}`, 'data-plan-of': t.id },
    (plans.some((p) => p.id === t.plan)
      ? plans
      : [...plans, { id: t.plan, name: t.plan, price: 0 }]
    ).map((p) => h('option', { value: p.id, selected: p.id === t.plan }, p.name)),
  ) as HTMLSelectElement
  select.addEventListener('change', async () => {
    select.disabled = true
    const plan = select.value
    let following = false
    try {
      type Moved = { plan: string; previous_plan: string; moved_rows: number }
      const answer = await api.send<Moved | Job>(
        'PUT',
        `/api/v1/tenants/${encodeURIComponent(t.id)}/upgrade`,
        { plan },
      )
      const r = await outcomeOf(answer, (seconds) => {
        following = true
        done(`Moving ${t.name} to ${plan}: still running (${seconds} s)…`)
      })
      t.plan = r.plan
      done(`${t.name} moved from ${r.previous_plan} to ${r.plan}.`)
    } catch (err) {
      select.value = t.plan
      if (following) done(`${t.name} stays on ${t.plan}.`)
      showError(err)
    } finally {
      select.disabled = false
    }
  })
  return select
}

export async function operatorView(
  root: HTMLElement,
  go: (hash: string) => void,
  told: HTMLElement[] = [],
): Promise<void> {
  const [res, plansRes] = await Promise.all([
    api.get<{ data: TenantRow[] }>('/api/v1/tenants'),
    api.get<{ data: Plan[] }>('/api/v1/billing/plans').catch((err) => {
      showError(err)
      return { data: [] as Plan[] }
    }),
  ])
  const plans = plansRes.data
  const tenants = res.data.filter((t) => t.id !== 'platform')
  const figures = tenantFigures()
  const notice = h('div', { role: 'status', id: 'operator-notice' }, told)
  /** Draws the page again from the API (keeping its heading), with a message on top. */
  const redraw = (message: HTMLElement[] = []) => {
    root.replaceChildren(...[...root.children].slice(0, 1))
    return operatorView(root, go, message)
  }
  const statusButton = (t: TenantRow) =>
    h(
      'button',
      {
        type: 'button',
        class: t.status === 'suspended' ? null : 'danger',
        'data-status-of': t.id,
        onclick: async () => {
          const verb = t.status === 'suspended' ? 'resume' : 'suspend'
          if (verb === 'suspend' && !confirm(`Suspend ${t.name}? Its users can only read.`)) return
          try {
            await api.send('POST', `/api/v1/tenants/${encodeURIComponent(t.id)}/${verb}`)
            await redraw([
              h('p', {}, `${t.name} was ${verb === 'resume' ? 'resumed' : 'suspended'}.`),
            ])
          } catch (err) {
            showError(err)
          }
        },
      },
      t.status === 'suspended' ? 'Resume' : 'Suspend',
    )
  const create = formWith({
    id: 'create-tenant-form',
    label: 'Create a tenant',
    fields: [
      field('Business name', h('input', { name: 'name', required: true, maxlength: 200 })),
      field(
        "Admin's email",
        h('input', { name: 'admin_email', type: 'email', required: true, autocomplete: 'off' }),
      ),
      field(
        'Plan',
        h(
          'select',
          { name: 'plan' },
          plans.map((p) => h('option', { value: p.id }, `${p.name} · ${money(p.price)} a month`)),
        ),
      ),
    ],
    submit: 'Create tenant',
    onSubmit: async (v) => {
      const made = await api.send<{
        id: string
        name: string
        invite_url?: string
        invite_expires_at?: string
      }>('POST', '/api/v1/tenants', {
        name: v.name,
        admin_email: v.admin_email,
        ...(v.plan ? { plan: v.plan } : {}),
      })
      await redraw([
        h('p', {}, `${made.name} (${made.id}) was created.`),
        made.invite_url
          ? inviteLink(v.admin_email ?? '', made.invite_url, made.invite_expires_at)
          : h('span'),
      ])
    },
  })
  root.append(
    section('Create a tenant', create, notice),
    section(
      'Tenants',
      h(
        'p',
        { class: 'muted' },
        'Pick a tenant to see its dashboard as the operator (the picker in the header does the same).',
      ),
      tenants.length
        ? table(
            ['Tenant', 'Plan', 'Isolation', 'Status', 'Transactions', 'Net', 'Created', ''],
            tenants.map((t) => [
              h('span', {}, h('strong', {}, t.name), h('br'), h('code', {}, t.id)),
              planControl(t, plans, (text) => notice.replaceChildren(h('p', {}, text))),
              t.isolation,
              h('span', { 'data-status': t.id }, t.status),
              figures(t.id).count,
              figures(t.id).net,
              day(t.created_at),
              h(
                'span',
                { class: 'actions' },
                h(
                  'button',
                  {
                    type: 'button',
                    'data-tenant': t.id,
                    onclick: () => {
                      pickTenant(t.id)
                      go('#/overview')
                    },
                  },
                  `Open ${t.name}`,
                ),
                statusButton(t),
              ),
            ]),
            { id: 'tenant-list' },
          )
        : h('p', { class: 'muted' }, 'No tenants yet: create the first one above.'),
    ),
    moneyPanel(),
  )
}
