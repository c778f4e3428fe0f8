import { api, scoped } from './api.ts'
import { day, h } from './ui.ts'

/**
 * The period every page reads (summary, chart, customers, insights, exports): a preset or a
 * custom range of whole days, kept for the browser tab so moving between pages keeps it. "Last N
 * days" end on the last day with data when the data ended before today: a statement that ended
 * months ago is not months of nothing.
 */
export type Preset = '7d' | '30d' | '90d' | 'this-month' | 'last-month' | 'statement' | 'custom'

export interface Coverage {
  today: string
  first_day: string | null
  last_day: string | null
  statement: { from: string; to: string } | null
}

export interface Period {
  preset: Preset
  from: string
  to: string
  days: number
  /** The as-long period just before, and whether the data reaches back to its start. */
  previous: { from: string; to: string; covered: boolean }
  /** The period in words: `Last 30 days · 13 Mar – 11 Apr 2026`. */
  words: string
}

const KEY = 'mmp.period'
const PRESETS: Record<Preset, string> = {
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  '90d': 'Last 90 days',
  'this-month': 'This month',
  'last-month': 'Last month',
  statement: "The statement's period",
  custom: 'Custom',
}

const toDate = (d: string) => new Date(`${d}T12:00:00Z`)
const iso = (d: Date) => d.toISOString().slice(0, 10)
export const addDays = (d: string, n: number) => iso(new Date(toDate(d).getTime() + n * 86_400_000))
const daysFrom = (from: string, to: string) =>
  Math.round((toDate(to).getTime() - toDate(from).getTime()) / 86_400_000) + 1

interface Stored {
  preset: Preset
  from?: string
  to?: string
}

function stored(): Stored {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Stored | null
    if (s && s.preset in PRESETS) return s
  } catch {}
  return { preset: '90d' }
}

export function choose(s: Stored): void {
  sessionStorage.setItem(KEY, JSON.stringify(s))
}

/** The chosen period as days, given what the data covers. */
export function resolve(cov: Coverage, s: Stored = stored()): Period {
  const anchor = cov.last_day && cov.last_day < cov.today ? cov.last_day : cov.today
  let { from, to } = { from: anchor, to: anchor }
  const month = cov.today.slice(0, 8)
  if (s.preset === '7d' || s.preset === '30d' || s.preset === '90d') {
    from = addDays(anchor, 1 - Number.parseInt(s.preset, 10))
  } else if (s.preset === 'this-month') {
    from = `${month}01`
    to = cov.today
  } else if (s.preset === 'last-month') {
    to = addDays(`${month}01`, -1)
    from = `${to.slice(0, 8)}01`
  } else if (s.preset === 'statement' && cov.statement) {
    from = cov.statement.from
    to = cov.statement.to
  } else if (s.preset === 'custom' && s.from && s.to) {
    from = s.from <= s.to ? s.from : s.to
    to = s.from <= s.to ? s.to : s.from
  } else {
    // The statement's period without a statement, or a custom range without its days.
    from = addDays(anchor, -89)
  }
  const days = daysFrom(from, to)
  const prevTo = addDays(from, -1)
  const prevFrom = addDays(from, -days)
  const covered = !!cov.first_day && cov.first_day <= prevFrom
  const label = PRESETS[s.preset]
  return {
    preset: s.preset,
    from,
    to,
    days,
    previous: { from: prevFrom, to: prevTo, covered },
    words: `${label} · ${day(from)} – ${day(to)}`,
  }
}

/** What the data covers, from the analytics service. */
export const coverage = () => api.get<Coverage>(scoped('/api/v1/analytics/period'))

/** `from=…&to=…` for a period's API reads. */
export const rangeQuery = (p: { from: string; to: string }) =>
  `from=${encodeURIComponent(p.from)}&to=${encodeURIComponent(p.to)}`

/**
 * The picker: a preset list, and two date fields for a custom range. Changing it stores the
 * choice and calls `onChange` (the page draws itself again).
 */
export function periodPicker(
  cov: Coverage,
  period: Period,
  onChange: () => Promise<void>,
): HTMLElement {
  // The page says it is busy while it draws the new period (as it does on navigation).
  const redraw = () => {
    const main = document.getElementById('main')
    main?.setAttribute('aria-busy', 'true')
    void onChange().finally(() => main?.setAttribute('aria-busy', 'false'))
  }
  const select = h(
    'select',
    { id: 'period-preset', name: 'preset' },
    (Object.keys(PRESETS) as Preset[])
      .filter((p) => p !== 'statement' || cov.statement)
      .map((p) => h('option', { value: p, selected: p === period.preset }, PRESETS[p])),
  ) as HTMLSelectElement
  const dateField = (name: 'from' | 'to', label: string, value: string) =>
    h(
      'label',
      { class: 'custom-range', hidden: period.preset !== 'custom' },
      label,
      h('input', {
        type: 'date',
        name,
        id: `period-${name}`,
        value,
        min: cov.first_day ?? undefined,
        max: cov.today,
      }),
    )
  const apply = h(
    'button',
    { type: 'submit', class: 'custom-range', hidden: period.preset !== 'custom' },
    'Show',
  )
  const form = h(
    'form',
    { class: 'period', id: 'period', 'aria-label': 'Period' },
    h('label', {}, 'Period', select),
    dateField('from', 'From', period.from),
    dateField('to', 'To', period.to),
    apply,
    h(
      'p',
      { class: 'period-words muted', id: 'period-words', 'aria-live': 'polite' },
      period.words,
    ),
  ) as HTMLFormElement
  select.addEventListener('change', () => {
    const preset = select.value as Preset
    if (preset === 'custom') {
      for (const el of form.querySelectorAll<HTMLElement>('.custom-range')) el.hidden = false
      ;(form.querySelector('#period-from') as HTMLInputElement).focus()
      return
    }
    choose({ preset })
    redraw()
  })
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    const v = (n: string) => (form.querySelector(`#period-${n}`) as HTMLInputElement).value
    if (!v('from') || !v('to')) return
    choose({ preset: 'custom', from: v('from'), to: v('to') })
    redraw()
  })
  return form
}

/**
 * The change against the previous period, or why there is none: `+12% on the 30 days before`,
 * or "not enough history to compare" when the data does not reach back to its start.
 */
export function comparison(current: number, previous: number | null, p: Period): string {
  if (!p.previous.covered || previous === null) return 'not enough history to compare'
  if (previous === 0)
    return current === 0 ? `same as the ${p.days} days before` : `none in the ${p.days} days before`
  const change = Math.round(((current - previous) / Math.abs(previous)) * 1000) / 10
  if (change === 0) return `same as the ${p.days} days before`
  return `${change > 0 ? '+' : '-'}${Math.abs(change).toLocaleString('en-KE')}% on the ${p.days} days before`
}
