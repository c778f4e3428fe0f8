import { PLATFORM_TENANT } from '../schema/vocabulary.ts'
import { activeTenant, api, can, currentSession, isOperator, logout, pickTenant } from './api.ts'
import { h, showError } from './ui.ts'
import { acceptView } from './views/accept.ts'
import { importView } from './views/import.ts'
import { insightsView } from './views/insights.ts'
import { loginView } from './views/login.ts'
import { operatorView } from './views/operator.ts'
import { overviewView } from './views/overview.ts'
import { paymentsView } from './views/payments.ts'
import { peopleView } from './views/people.ts'
import { reconciliationView } from './views/reconciliation.ts'
import { settingsView } from './views/settings.ts'
import { transactionsView } from './views/transactions.ts'

interface View {
  title: string
  show: () => boolean
  /** The view reads one tenant's data: the operator must pick a tenant first. */
  needsTenant: boolean
  render: (root: HTMLElement, tenantId: string) => Promise<void>
}

const views: Record<string, View> = {
  overview: { title: 'Overview', show: () => true, needsTenant: true, render: overviewView },
  transactions: {
    title: 'Transactions',
    show: () => true,
    needsTenant: true,
    render: transactionsView,
  },
  customers: { title: 'Customers', show: () => true, needsTenant: true, render: peopleView },
  insights: { title: 'Insights', show: () => true, needsTenant: true, render: insightsView },
  payments: { title: 'Payments', show: () => true, needsTenant: true, render: paymentsView },
  reconciliation: {
    title: 'Reconciliation',
    show: () => true,
    needsTenant: true,
    render: reconciliationView,
  },
  import: {
    title: 'Import',
    show: () => can('manage'),
    needsTenant: true,
    render: importView,
  },
  settings: {
    title: 'Settings',
    show: () => can('admin') || can('manage'),
    needsTenant: true,
    render: settingsView,
  },
  tenants: {
    title: 'Tenants',
    show: () => isOperator(),
    needsTenant: false,
    render: (root) => operatorView(root, go),
  },
}

const app = document.getElementById('app')!

/** The operator's tenant picker: every tenant from GET /api/v1/tenants. */
function tenantPicker(): HTMLElement {
  const select = h(
    'select',
    { id: 'tenant-picker', name: 'tenant' },
    h('option', { value: '' }, '— all tenants —'),
  ) as HTMLSelectElement
  api
    .get<{ data: { id: string; name: string }[] }>('/api/v1/tenants')
    .then((res) => {
      for (const t of res.data.filter((t) => t.id !== PLATFORM_TENANT))
        select.append(
          h('option', { value: t.id, selected: t.id === activeTenant() }, `${t.name} (${t.id})`),
        )
    })
    .catch(showError)
  select.addEventListener('change', () => {
    pickTenant(select.value || null)
    const here = location.hash
    go(!select.value ? '#/tenants' : here && here !== '#/tenants' ? here : '#/overview')
  })
  return h('label', { class: 'picker' }, 'Tenant', select)
}

async function route(moveFocus = false): Promise<void> {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?')
  const name = path || 'overview'
  if (name === 'accept') {
    // An invitation link: whoever is signed in here, the link's person signs in instead.
    document.title = 'Accept the invitation · mmp'
    app.replaceChildren(
      h('div', { id: 'problems', 'aria-live': 'assertive' }),
      acceptView(new URLSearchParams(query).get('token') ?? '', () => {
        // The link's token is spent: it leaves the address bar and the history entry.
        history.replaceState(null, '', `${location.pathname}#/overview`)
        void route(true)
      }),
    )
    return
  }
  const session = currentSession()
  if (!session) {
    document.title = 'Log in · mmp'
    app.replaceChildren(
      h('div', { id: 'problems' }),
      loginView(() => go('#/overview')),
    )
    return
  }
  const tenantId = activeTenant()
  let view = views[name]?.show() ? views[name]! : views.overview!
  // The operator without a picked tenant gets the tenant list instead of a tenant's page.
  if (view.needsTenant && !tenantId) view = views.tenants!
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    Object.entries(views)
      .filter(([, v]) => v.show() && (tenantId || !v.needsTenant))
      .map(([key, v]) =>
        h('a', { href: `#/${key}`, 'aria-current': view === v ? 'page' : null }, v.title),
      ),
  )
  const main = h('main', { id: 'main', tabindex: -1 })
  app.replaceChildren(
    h('a', { href: '#main', class: 'skip', onclick: skipToMain }, 'Skip to content'),
    h(
      'header',
      {},
      h('strong', { class: 'brand' }, 'mmp'),
      nav,
      isOperator() ? tenantPicker() : null,
      h(
        'span',
        { class: 'who' },
        `${session.user.email} · ${session.user.role}${isOperator() ? ' (operator)' : ` · ${session.user.tenant_id}`}`,
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          id: 'logout',
          // The login page at once: the session is gone before logout's request to auth is sent,
          // and a page rendered when that request came back would wipe whatever was opened meanwhile
          // (an invitation link being filled in, and the 422 it answered).
          onclick: () => {
            void logout()
            void route()
          },
        },
        'Log out',
      ),
    ),
    h('div', { id: 'problems', 'aria-live': 'assertive' }),
    main,
  )
  main.append(
    h(
      'h1',
      {},
      view.title,
      isOperator() && tenantId && view.needsTenant
        ? h('small', { class: 'muted' }, ` · ${tenantId}`)
        : null,
    ),
  )
  document.title = `${view.title} · mmp`
  // After a navigation, keyboard and screen-reader users land on the new page's content.
  if (moveFocus) main.focus({ preventScroll: true })
  main.setAttribute('aria-busy', 'true')
  try {
    await view.render(main, tenantId ?? '')
  } catch (err) {
    showError(err)
  } finally {
    main.setAttribute('aria-busy', 'false')
  }
}

function skipToMain(e: Event): void {
  e.preventDefault()
  document.getElementById('main')?.focus()
}

/** Shows a page: by changing the hash (the hashchange listener renders), or now if it is current. */
export function go(hash: string): void {
  if (location.hash === hash) void route(true)
  else location.hash = hash
}

window.addEventListener('hashchange', () => void route(true))
void route()
