import { t } from 'elysia'
import { toMajor } from '../kernel/money.ts'
import type { ProofVerdict } from './statement-proof.ts'
import type { StatementRead } from './statement-row.ts'

/**
 * What an import answer says of a statement's proof (DESIGN §16 "A statement proves itself"):
 * whether the kept rows reproduce the file's own totals and running balance, and where not, the
 * finding in the owner's words. Amounts in shillings.
 */
export const StatementProof = t.Object({
  verdict: t.Union([t.Literal('proven'), t.Literal('does_not_add_up'), t.Literal('unchecked')], {
    description:
      "'proven': the rows reproduce the file's totals and running balance; 'does_not_add_up': they do not (see finding); 'unchecked': the file states no totals and has no Balance column",
  }),
  totals: t.Object({
    file: t.Nullable(
      t.Object({
        paid_in: t.Optional(t.Number()),
        paid_out: t.Optional(t.Number()),
        opening_balance: t.Optional(t.Number()),
        closing_balance: t.Optional(t.Number()),
      }),
    ),
    rows: t.Object({ paid_in: t.Number(), paid_out: t.Number() }),
    match: t.Nullable(t.Boolean()),
  }),
  balance: t.Object({
    chains: t.Nullable(t.Boolean()),
    opening: t.Nullable(t.Number()),
    closing: t.Nullable(t.Number()),
    break_count: t.Integer(),
    breaks: t.Array(
      t.Object({
        rows: t.Array(t.Integer()),
        between: t.Array(t.String()),
        expected: t.Number(),
        found: t.Number(),
        missing: t.Number(),
      }),
    ),
  }),
  finding: t.Nullable(t.String()),
})
export type StatementProofAnswer = typeof StatementProof.static

const kes = (cents: number) =>
  `KES ${toMajor(Math.abs(cents)).toLocaleString('en-KE', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`

/** "2021-11-05 16:10:22" → "5 Nov 2021 16:10"; other texts as they are. */
function when(text: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})/.exec(text.trim())
  const d = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})[ T,]+(\d{1,2}):(\d{2})/.exec(text.trim())
  const parts = m ? [m[3], m[2], m[1], m[4], m[5]] : d ? [d[1], d[2], d[3], d[4], d[5]] : null
  if (!parts) return text
  const month = [
    'Jan',
    'Feb',
    'Mar',
    'Apr',
    'May',
    'Jun',
    'Jul',
    'Aug',
    'Sep',
    'Oct',
    'Nov',
    'Dec',
  ][Number(parts[1]) - 1]
  return `${Number(parts[0])} ${month ?? parts[1]} ${parts[2]} ${parts[3]!.padStart(2, '0')}:${parts[4]}`
}

/** The proof as the API says it. */
export function proofAnswer(p: ProofVerdict | undefined): StatementProofAnswer {
  const empty = { paidIn: 0, paidOut: 0, paidInAll: 0, paidOutAll: 0 }
  const v: ProofVerdict = p ?? {
    file: null,
    rows: empty,
    totalsMatch: null,
    balanceChains: null,
    breaks: [],
    breakCount: 0,
    opening: null,
    closing: null,
  }
  const f = v.file
  const file = f
    ? {
        ...(f.paidIn !== undefined ? { paid_in: toMajor(f.paidIn) } : {}),
        ...(f.paidOut !== undefined ? { paid_out: toMajor(f.paidOut) } : {}),
        ...(f.opening !== undefined ? { opening_balance: toMajor(f.opening) } : {}),
        ...(f.closing !== undefined ? { closing_balance: toMajor(f.closing) } : {}),
      }
    : null
  const failed = v.totalsMatch === false || v.balanceChains === false
  const checked = v.totalsMatch !== null || v.balanceChains !== null
  return {
    verdict: failed ? 'does_not_add_up' : checked ? 'proven' : 'unchecked',
    totals: {
      file,
      rows: { paid_in: toMajor(v.rows.paidIn), paid_out: toMajor(v.rows.paidOut) },
      match: v.totalsMatch,
    },
    balance: {
      chains: v.balanceChains,
      opening: v.opening === null || Number.isNaN(v.opening) ? null : toMajor(v.opening),
      closing: v.closing === null || Number.isNaN(v.closing) ? null : toMajor(v.closing),
      break_count: v.breakCount,
      breaks: v.breaks.map((b) => ({
        rows: b.rows,
        between: b.between,
        expected: toMajor(b.expected),
        found: toMajor(b.found),
        missing: toMajor(b.missing),
      })),
    },
    finding: findingOf(v),
  }
}

/** The one sentence an owner reads when a statement does not add up, or null when it does. */
export function findingOf(v: ProofVerdict): string | null {
  if (v.balanceChains === false && v.breaks.length > 0) {
    const b = v.breaks[0]!
    const more = v.breakCount > 1 ? ` (and ${v.breakCount - 1} more places)` : ''
    const what = b.missing > 0 ? 'money in' : 'money out'
    return `This statement is missing ${kes(b.missing)} of ${what} between ${when(b.between[0])} and ${when(b.between[1])}${more}: its running balance does not follow from the rows read.`
  }
  if (v.totalsMatch === false && v.file) {
    const f = v.file
    const gaps: string[] = []
    if (f.paidIn !== undefined && f.paidIn !== v.rows.paidIn && f.paidIn !== v.rows.paidInAll)
      gaps.push(`paid in ${kes(f.paidIn)} but the rows read add up to ${kes(v.rows.paidIn)}`)
    if (f.paidOut !== undefined && f.paidOut !== v.rows.paidOut && f.paidOut !== v.rows.paidOutAll)
      gaps.push(`paid out ${kes(f.paidOut)} but the rows read add up to ${kes(v.rows.paidOut)}`)
    if (gaps.length === 0) gaps.push('opening balance, rows and closing balance do not agree')
    return `This statement does not add up: its totals say ${gaps.join('; ')}.`
  }
  return null
}

/** The statement part of an import answer: layout, rows read, proof. */
export function statementAnswer(read: StatementRead) {
  // Keys in the order of the answer's schema (model.ts), so a replayed answer is byte for byte
  // the first one.
  return {
    read: read.counts?.read ?? read.rows,
    layout: read.layout?.id ?? 'table',
    layout_name: read.layout?.name ?? 'M-PESA statement table',
    proof: proofAnswer(read.proof),
  }
}
