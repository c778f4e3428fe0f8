import { can, currentSession, isOperator, logout } from './api.ts'
import { h, showError } from './ui.ts'
import { loginView } from './views/login.ts'
import { overviewView } from './views/overview.ts'
import { paymentsView } from './views/payments.ts'
import { settingsView } from './views/settings.ts'
import { transactionsView } from './views/transactions.ts'

const views: Record<
  string,
  { title: string; show: () => boolean; render: (root: HTMLElement) => Promise<void> }
> = {
  overview: { title: 'Overview', show: () => true, render: overviewView },
  transactions: { title: 'Transactions', show: () => true, render: transactionsView },
  payments: { title: 'Payments', show: () => true, render: paymentsView },
  settings: { title: 'Settings', show: () => can('admin') || can('manage'), render: settingsView },
}

const app = document.getElementById('app')!

async function route(): Promise<void> {
  const session = currentSession()
  const name = location.hash.replace(/^#\/?/, '') || 'overview'
  if (!session) {
    app.replaceChildren(
      h('div', { id: 'problems' }),
      loginView(() => (location.hash = '#/overview')),
    )
    return
  }
  const view = views[name]?.show() ? views[name] : views.overview!
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    Object.entries(views)
      .filter(([, v]) => v.show())
      .map(([key, v]) =>
        h('a', { href: `#/${key}`, 'aria-current': view === v ? 'page' : null }, v.title),
      ),
  )
  const main = h('main', { id: 'main' })
  app.replaceChildren(
    h(
      'header',
      {},
      h('strong', { class: 'brand' }, 'mmp'),
      nav,
      h(
        'span',
        { class: 'who' },
        `${session.user.email} · ${session.user.role}${isOperator() ? ' (operator)' : ''} · ${session.user.tenant_id}`,
      ),
      h(
        'button',
        { type: 'button', class: 'link', id: 'logout', onclick: () => logout().then(route) },
        'Log out',
      ),
    ),
    h('div', { id: 'problems' }),
    main,
  )
  main.append(h('h1', {}, view.title))
  try {
    await view.render(main)
  } catch (err) {
    showError(err)
  }
}

window.addEventListener('hashchange', () => void route())
void route()
