import { fieldSentence, ownerSentence, plainDetail } from './problems.ts'

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

const amount = new Intl.NumberFormat('en-KE', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
})

/**
 * The one money format of the dashboard and the PDF report: `KES 1,234.00`, en-KE grouping, the
 * sign before the figure. A no-break space keeps the currency and the figure on one line.
 */
export const money = (n: number | null | undefined) =>
  n === null || n === undefined || !Number.isFinite(n)
    ? '—'
    : `KES ${n < 0 ? '-' : ''}${amount.format(Math.abs(n))}`
/** Whole shillings, for sentences about estimates (`KES 184,000`). */
export const roundMoney = (n: number | null | undefined) =>
  n === null || n === undefined || !Number.isFinite(n)
    ? '—'
    : `KES ${n < 0 ? '-' : ''}${Math.round(Math.abs(n)).toLocaleString('en-KE')}`
export const num = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined ? '—' : n.toLocaleString('en-KE', { maximumFractionDigits: digits })

const dayFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
})
const timeFormat = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' })
/** `22 Nov 2026, 14:05`. */
export const date = (s: string | null | undefined) =>
  s ? `${dayFormat.format(new Date(s))}, ${timeFormat.format(new Date(s))}` : '—'
/** `22 Nov 2026`; a bare `YYYY-MM-DD` is that calendar day wherever the browser is. */
export const day = (s: string | null | undefined) =>
  s ? dayFormat.format(new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T12:00:00` : s)) : '—'

/** A placeholder block shown while a panel's data is on its way. */
export const skeleton = (lines = 3) =>
  h(
    'div',
    { class: 'skeleton', 'aria-hidden': 'true' },
    Array.from({ length: lines }, () => h('div', { class: 'skeleton-line' })),
  )

/**
 * Shows an API problem (or any error) as a dismissible banner at the top of the view: what
 * happened and what to do in the owner's words (web/problems.ts), the fields to correct, and a
 * small reference (status, code, request id) to quote to support. The API's own detail stays
 * under "Details" for whoever needs it.
 */
export function showError(err: unknown): void {
  const p = err as {
    title?: string
    detail?: string
    status?: number
    code?: string
    requestId?: string
    errors?: { field: string; message: string }[]
  }
  const isProblem = typeof p.status === 'number'
  const detail = p.detail ?? (err instanceof Error ? err.message : String(err))
  // A fetch that never reached the platform is a TypeError; other errors carry their own words.
  const headline =
    isProblem || err instanceof TypeError || !(err instanceof Error)
      ? ownerSentence(p.code, isProblem ? p.status : undefined)
      : err.message
  const banner = h(
    'div',
    { class: 'problem', role: 'alert', 'data-code': p.code ?? null },
    h('strong', {}, headline),
    p.errors?.length
      ? h(
          'ul',
          {},
          p.errors.map((e) => h('li', {}, fieldSentence(e.field, e.message))),
        )
      : null,
    h(
      'details',
      { class: 'problem-ref' },
      h(
        'summary',
        {},
        `Reference: ${[p.status, p.code, p.requestId].filter(Boolean).join(' · ') || 'no answer'}`,
      ),
      p.errors?.length ? null : h('span', {}, plainDetail(detail) ?? ''),
    ),
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
