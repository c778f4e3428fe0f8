import { api, scoped } from '../api.ts'
import { date, h, money, num, roundMoney, table } from '../ui.ts'

/** A place where a statement's running balance does not follow from the row before it. */
export interface BalanceBreak {
  rows: number[]
  between: string[]
  expected: number
  found: number
  missing: number
}

/** Whether a statement's kept rows reproduce its own totals and running balance (parser). */
export interface Proof {
  verdict: 'proven' | 'does_not_add_up' | 'unchecked'
  totals: { match: boolean | null }
  balance: { chains: boolean | null; break_count: number; breaks: BalanceBreak[] }
  finding: string | null
}

/** One statement import as `GET /api/v1/statements` and `POST /api/v1/statements` answer it. */
export interface StatementImport {
  import_id: string
  file_name: string | null
  created_at?: string
  read?: number | null
  accepted: number
  duplicates: number
  rejected: number
  skipped: number
  layout?: string | null
  layout_name?: string
  proof?: Proof | null
}

/** Layout ids the list answers, in words (the upload answer carries its own `layout_name`). */
const LAYOUT_WORDS: Record<string, string> = {
  'org-portal': 'Business (org portal) statement',
  'app-2025': 'M-PESA app full statement',
  personal: 'Personal statement',
  table: 'Statement table',
}
export const layoutWords = (s: StatementImport) =>
  s.layout_name ?? (s.layout ? (LAYOUT_WORDS[s.layout] ?? s.layout) : '—')

/** Every row of the file in one counter: read = added + already there + skipped + rejected. */
export const rowsRead = (s: StatementImport) =>
  s.read ?? s.accepted + s.duplicates + s.rejected + s.skipped

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/**
 * A Completion Time as the statement prints it ("2021-11-05 16:10:22", "05-11-2021 16:10:22")
 * in words: its day ("5 Nov 2021") and its time ("16:10"); null when it is neither form.
 */
export function statementTime(text: string): { day: string; time: string } | null {
  const iso = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})/.exec(text.trim())
  const dmy = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})[ T,]+(\d{1,2}):(\d{2})/.exec(text.trim())
  const p = iso
    ? { d: iso[3]!, m: iso[2]!, y: iso[1]!, hh: iso[4]!, mm: iso[5]! }
    : dmy
      ? { d: dmy[1]!, m: dmy[2]!, y: dmy[3]!, hh: dmy[4]!, mm: dmy[5]! }
      : null
  if (!p) return null
  return {
    day: `${Number(p.d)} ${MONTHS[Number(p.m) - 1] ?? p.m} ${p.y}`,
    time: `${p.hh.padStart(2, '0')}:${p.mm}`,
  }
}

/** "between 5 Nov 2021 16:10 and 19:40" (the day once when both times fall on it). */
export function betweenWords(between: string[]): string {
  const [a, b] = [statementTime(between[0] ?? ''), statementTime(between[1] ?? '')]
  if (!a || !b) return `between ${between[0] ?? '?'} and ${between[1] ?? '?'}`
  if (a.day === b.day) return `between ${a.day} ${a.time} and ${b.time}`
  return `between ${a.day} ${a.time} and ${b.day} ${b.time}`
}

/** What one break means: "missing KES 54,272 of money in between 5 Nov 2021 16:10 and 19:40". */
export const breakWords = (b: BalanceBreak) =>
  `missing ${roundMoney(Math.abs(b.missing))} of money ${b.missing > 0 ? 'in' : 'out'} ${betweenWords(b.between)}`

/** The owner's sentence for a statement that does not add up. */
export function warningSentence(s: StatementImport): string {
  const p = s.proof
  const b = p?.balance.breaks[0]
  const name = s.file_name ? `“${s.file_name}”` : 'This statement'
  if (b) {
    const more = (p?.balance.break_count ?? 1) - 1
    return `${name} is ${breakWords(b)}${more > 0 ? ` (and ${num(more)} more ${more === 1 ? 'place' : 'places'})` : ''}.`
  }
  return p?.finding ?? `${name} does not add up.`
}

const VERDICT_WORDS: Record<Proof['verdict'], string> = {
  proven: 'Totals match',
  does_not_add_up: 'Does not add up',
  unchecked: 'Not checked',
}
export const verdictWords = (p: Proof | null | undefined) =>
  p ? VERDICT_WORDS[p.verdict] : 'Not checked'

function proofDetail(p: Proof): string {
  if (p.verdict === 'unchecked')
    return 'This file states no totals and has no balance column, so it could not be checked.'
  if (p.verdict === 'proven') {
    const parts = [
      p.totals.match ? "the rows read add up to the statement's own totals" : null,
      p.balance.chains ? 'the running balance follows from every row' : null,
    ].filter(Boolean)
    return `Every row is accounted for: ${parts.join(' and ')}.`
  }
  return p.finding ?? 'The rows read do not reproduce the statement’s totals or running balance.'
}

/** The proof of one import in the owner's words: counters, layout, verdict and where rows are missing. */
export function proofBlock(s: StatementImport): HTMLElement {
  const figures = h(
    'dl',
    { class: 'figures' },
    [
      ['Rows read', rowsRead(s)],
      ['Added', s.accepted],
      ['Already there', s.duplicates],
      ['Skipped (not transactions)', s.skipped],
      ['Rejected', s.rejected],
    ].map(([label, n]) =>
      h(
        'div',
        { 'data-figure': String(label) },
        h('dt', {}, String(label)),
        h('dd', {}, num(Number(n))),
      ),
    ),
  )
  const p = s.proof
  const verdict = p?.verdict ?? 'unchecked'
  return h(
    'div',
    { class: 'proof', 'data-verdict': verdict, id: 'import-proof' },
    figures,
    h('p', { class: 'muted' }, `Layout: ${layoutWords(s)}`),
    h(
      'p',
      { class: `verdict verdict-${verdict}`, role: verdict === 'does_not_add_up' ? 'alert' : null },
      h('strong', {}, verdictWords(p)),
      p ? ` — ${proofDetail(p)}` : '',
    ),
    p?.balance.breaks.length
      ? table(
          ['Between', 'Missing', 'Balance expected', 'Balance printed'],
          p.balance.breaks.map((b) => [
            betweenWords(b.between).replace(/^between /, ''),
            h(
              'span',
              { class: b.missing > 0 ? 'in' : 'out' },
              `${money(Math.abs(b.missing))} ${b.missing > 0 ? 'in' : 'out'}`,
            ),
            money(b.expected),
            money(b.found),
          ]),
          { id: 'proof-breaks' },
        )
      : null,
  )
}

/** The tenant's past imports, newest first, each with its proof in a word. */
export async function importsTable(): Promise<HTMLElement> {
  const res = await api.get<{ data: StatementImport[] }>(scoped('/api/v1/statements?limit=20'))
  if (!res.data.length) return h('p', { class: 'muted' }, 'No statements imported yet.')
  return table(
    [
      'Imported',
      'File',
      'Layout',
      'Rows read',
      'Added',
      'Already there',
      'Skipped',
      'Rejected',
      'Proof',
    ],
    res.data.map((s) => [
      date(s.created_at),
      s.file_name ?? '—',
      layoutWords(s),
      num(rowsRead(s)),
      num(s.accepted),
      num(s.duplicates),
      num(s.skipped),
      num(s.rejected),
      s.proof?.verdict === 'does_not_add_up'
        ? h('span', { class: 'out', 'data-verdict': 'does_not_add_up' }, warningSentence(s))
        : h('span', { 'data-verdict': s.proof?.verdict ?? 'unchecked' }, verdictWords(s.proof)),
    ]),
    { id: 'imports-table' },
  )
}

/** Imports that do not add up, for the overview's warning cards. */
export async function unprovenImports(): Promise<StatementImport[]> {
  const res = await api.get<{ data: StatementImport[] }>(scoped('/api/v1/statements?limit=20'))
  return res.data.filter((s) => s.proof?.verdict === 'does_not_add_up')
}

/** A warning card per statement that does not add up: its figures are incomplete. */
export function warningCards(list: StatementImport[]): HTMLElement | null {
  if (!list.length) return null
  return h(
    'section',
    { class: 'panel warning', id: 'data-warnings', role: 'alert' },
    h(
      'h2',
      {},
      list.length === 1
        ? 'A statement does not add up'
        : `${num(list.length)} statements do not add up`,
    ),
    h(
      'ul',
      {},
      list.map((s) =>
        h(
          'li',
          { 'data-import': s.import_id },
          warningSentence(s),
          s.created_at ? h('small', { class: 'muted' }, ` Imported ${date(s.created_at)}.`) : null,
        ),
      ),
    ),
    h(
      'p',
      {},
      'Until the missing rows are imported, the figures below are incomplete and the business is not called healthy. ',
      h('a', { href: '#/import' }, 'See the imports'),
    ),
  )
}
