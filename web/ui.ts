/** A tiny DOM toolkit: elements, formatting, and a place to show problem details. */
type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>

export function h(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), v as EventListener)
    else if (v === true) el.setAttribute(k, '')
    else el.setAttribute(k, String(v))
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue
    el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
  return el
}

const kes = new Intl.NumberFormat('en-KE', {
  style: 'currency',
  currency: 'KES',
  maximumFractionDigits: 2,
})
export const money = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : kes.format(n)
export const num = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined ? '—' : n.toLocaleString('en-KE', { maximumFractionDigits: digits })
export const date = (s: string | null | undefined) =>
  s ? new Date(s).toLocaleString('en-KE', { dateStyle: 'medium', timeStyle: 'short' }) : '—'

export const day = (s: string | null | undefined) =>
  s ? new Date(s).toLocaleDateString('en-KE', { dateStyle: 'medium' }) : '—'

/** Shows an API problem (or any error) as a dismissible banner at the top of the view. */
export function showError(err: unknown): void {
  const p = err as {
    title?: string
    detail?: string
    status?: number
    errors?: { field: string; message: string }[]
  }
  const text = p.detail ?? (err instanceof Error ? err.message : String(err))
  const banner = h(
    'div',
    { class: 'problem', role: 'alert' },
    h('strong', {}, p.status ? `${p.status} ${p.title ?? ''}` : 'Error'),
    h('span', {}, ` ${text}`),
    p.errors?.length && !(p.errors.length === 1 && text.includes(p.errors[0]!.message))
      ? h(
          'ul',
          {},
          p.errors.map((e) => h('li', {}, `${e.field}: ${e.message}`)),
        )
      : null,
    h('button', { class: 'link', 'aria-label': 'Dismiss', onclick: () => banner.remove() }, '×'),
  )
  document.querySelector('#problems')?.append(banner)
}

export function card(title: string, value: string, hint?: string): HTMLElement {
  return h(
    'div',
    { class: 'card', 'data-metric': title },
    h('div', { class: 'card-title' }, title),
    h('div', { class: 'card-value' }, value),
    hint ? h('div', { class: 'card-hint' }, hint) : null,
  )
}

export function table(
  headers: string[],
  rows: (Child | Child[])[][],
  attrs: Attrs = {},
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      attrs,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((x) => h('th', { scope: 'col' }, x)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            r.map((c, i) => h('td', { 'data-label': headers[i] || null }, c)),
          ),
        ),
      ),
    ),
  )
}

export function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children)
}

/** Reads a form's named fields as strings. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]))
}
