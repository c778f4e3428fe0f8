import type { TransactionEvent } from '../../schema/events.ts'
import { KIND_LABELS, KIND_ROLE, KINDS, type Kind } from '../../schema/vocabulary.ts'

/**
 * What cashflow counts where (DESIGN §16 "Kinds"): operating flows are the kinds whose role is
 * revenue or expense, and older events without a kind (money in as revenue, out as expense).
 * Every other kind moves the balance but is not earned or spent: it is shown on its own line,
 * financing (loans drawn and repaid) or transfers (savings, own transfers, cash at an agent,
 * settlement to the bank, reversals), and never counts toward health, burn or runway.
 */
export type BalanceGroup = 'financing' | 'transfers'

const BALANCE_KINDS = KINDS.filter((k) => KIND_ROLE[k] === 'balance')

/** The line each balance-role kind is shown on. */
export const GROUP_OF: Partial<Record<Kind, BalanceGroup>> = Object.fromEntries(
  BALANCE_KINDS.map((k) => [
    k,
    k === 'loan_drawn' || k === 'loan_repaid' ? 'financing' : 'transfers',
  ]),
)

const quoted = (kinds: readonly string[]) => kinds.map((k) => `'${k}'`).join(', ')

/** SQL condition for operating rows on a kind column (its SQL name, from `sqlNames`). */
export const operatingSql = (kind: string) =>
  `coalesce(${kind}, '') NOT IN (${quoted(BALANCE_KINDS)})`

const byLabel = new Map<string, Kind>(
  KINDS.flatMap((k) => [
    [k, k],
    [KIND_LABELS[k].toLowerCase(), k],
  ]),
)

/**
 * The kind a transaction is counted as: the one its event states, else the one its category names
 * (a category that is a kind or its label), else '' (an older event: its direction decides).
 */
export function kindOfTransaction(txn: TransactionEvent): Kind | '' {
  if (txn.kind && (KINDS as readonly string[]).includes(txn.kind)) return txn.kind
  return byLabel.get(txn.category?.trim().toLowerCase() ?? '') ?? ''
}
