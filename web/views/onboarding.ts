import { api, can, scoped } from '../api.ts'
import { h } from '../ui.ts'

/**
 * The new owner's first steps, each ticked from what the platform holds (never a flag kept in the
 * browser): a till or paybill registered, a statement imported, someone invited, a payment taken,
 * a webhook added. Shown to Admins until every step is done.
 */
interface Step {
  id: string
  title: string
  why: string
  href: string
  action: string
  done: () => Promise<boolean>
}

const any = async (path: string, test: (row: Record<string, unknown>) => boolean = () => true) => {
  const res = await api.get<{ data: Record<string, unknown>[] }>(scoped(path))
  return res.data.some(test)
}

function steps(tenantId: string): Step[] {
  return [
    {
      id: 'till',
      title: 'Register your till or paybill',
      why: 'Payments customers make to it then appear here by themselves.',
      href: '#/settings',
      action: 'Register it in Settings',
      done: () => any('/api/v1/payments/c2b/shortcodes', (s) => s.status !== 'released'),
    },
    {
      id: 'statement',
      title: 'Import an M-PESA statement',
      why: 'Your history fills the summary, the chart, customers and insights.',
      href: '#/import',
      action: 'Import a statement',
      done: () => any('/api/v1/statements?limit=1'),
    },
    {
      id: 'staff',
      title: 'Invite your staff',
      why: 'Each person signs in with their own role: a cashier takes payments, an accountant reads.',
      href: '#/settings',
      action: 'Invite someone in Settings',
      done: async () =>
        (
          await api.get<{ data: unknown[] }>(
            `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`,
          )
        ).data.length > 1,
    },
    {
      id: 'payment',
      title: 'Take a first payment',
      why: 'Send an M-PESA prompt to a customer’s phone and see it arrive.',
      href: '#/payments',
      action: 'Request a payment',
      done: () => any('/api/v1/payments?limit=20', (p) => p.status === 'success'),
    },
    {
      id: 'webhook',
      title: 'Add a webhook',
      why: 'Your shop system or accountant hears of each payment as it happens.',
      href: '#/settings',
      action: 'Add one in Settings',
      done: () => any('/api/v1/webhooks'),
    },
  ]
}

/** The checklist panel, or null when the caller cannot act on it or every step is done. */
export async function onboardingChecklist(tenantId: string): Promise<HTMLElement | null> {
  if (!can('admin')) return null
  const list = steps(tenantId)
  // A step whose state cannot be read (a feature off on the plan) counts as not done.
  const done = await Promise.all(list.map((s) => s.done().catch(() => false)))
  const count = done.filter(Boolean).length
  if (count === list.length) return null
  return h(
    'section',
    { class: 'panel checklist', id: 'onboarding', 'aria-labelledby': 'onboarding-title' },
    h('h2', { id: 'onboarding-title' }, 'Getting started'),
    h(
      'p',
      { class: 'muted', id: 'onboarding-progress' },
      `${count} of ${list.length} done. Each step is ticked when mmp sees it done.`,
    ),
    h(
      'ol',
      {},
      list.map((s, i) =>
        h(
          'li',
          { 'data-step': s.id, 'data-done': String(done[i]) },
          h('span', { class: 'tick', 'aria-hidden': 'true' }, done[i] ? '✓' : `${i + 1}.`),
          h(
            'div',
            {},
            h('strong', { class: 'step-title' }, s.title),
            done[i] ? h('span', { class: 'visually-hidden' }, ' (done)') : null,
            h('div', { class: 'muted' }, s.why),
            done[i] ? null : h('a', { href: s.href }, s.action),
          ),
        ),
      ),
    ),
  )
}
