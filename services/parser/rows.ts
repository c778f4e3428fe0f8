import { KINDS, type Kind } from '../../schema/vocabulary.ts'
import type { AppError } from '../kernel/errors.ts'
import { toMinor } from '../kernel/money.ts'
import { normalisePhone, type ParsedTransaction, type RowError } from './parsed.ts'
import { AHEAD_MS, EARLIEST } from './statement-row.ts'

const RECEIPT = /^[A-Za-z0-9-]{4,40}$/
const LEG = /^[a-z0-9_~]{0,40}$/

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null)

/**
 * Checks one JSON transaction (DESIGN §11 shape). A bad row is reported with its index and field
 * and the rest of the batch goes on.
 */
export function readJsonRow(
  row: Record<string, unknown>,
  index: number,
  nowMs: number = Date.now(),
): { ok: true; transaction: ParsedTransaction } | { ok: false; error: RowError } {
  const bad = (field: string, message: string) => ({
    ok: false as const,
    error: { index, field, message },
  })
  const at = typeof row.occurred_at === 'string' ? Date.parse(row.occurred_at) : Number.NaN
  if (Number.isNaN(at)) return bad('occurred_at', 'must be an ISO 8601 date-time')
  if (at < EARLIEST || at > nowMs + AHEAD_MS)
    return bad('occurred_at', 'must be between 2007 and a day from now')
  let amount: number
  try {
    amount = toMinor(row.amount, 'amount')
  } catch (err) {
    return bad('amount', (err as AppError).errors?.[0]?.message ?? 'must be a number')
  }
  if (amount <= 0) return bad('amount', 'must be greater than 0')
  if (row.direction !== 'in' && row.direction !== 'out')
    return bad('direction', "must be 'in' or 'out'")
  const description = str(row.description)
  if (!description) return bad('description', 'is required')
  if (description.length > 500) return bad('description', 'must be at most 500 characters')
  const name = row.counterparty_name == null ? null : str(row.counterparty_name)
  if (row.counterparty_name != null && typeof row.counterparty_name !== 'string')
    return bad('counterparty_name', 'must be a string')
  if (name && name.length > 200) return bad('counterparty_name', 'must be at most 200 characters')
  let phone: string | null = null
  if (row.counterparty_phone != null) {
    const given = String(row.counterparty_phone)
    phone = normalisePhone(given) ?? (/^\d{9,15}$/.test(given) ? given : null)
    if (!phone) return bad('counterparty_phone', 'must be digits with the country prefix')
  }
  let receipt: string | null = null
  if (row.receipt_number != null) {
    receipt = str(row.receipt_number)
    if (!receipt || !RECEIPT.test(receipt))
      return bad('receipt_number', 'must be 4 to 40 letters, digits or dashes')
    receipt = receipt.toUpperCase()
  }
  let balance: number | null = null
  if (row.balance != null) {
    try {
      balance = toMinor(row.balance, 'balance')
    } catch (err) {
      return bad('balance', (err as AppError).errors?.[0]?.message ?? 'must be a number')
    }
  }
  let kind: Kind | undefined
  if (row.kind != null) {
    if (!(KINDS as readonly unknown[]).includes(row.kind))
      return bad('kind', `must be one of ${KINDS.join(', ')}`)
    kind = row.kind as Kind
  }
  let leg: string | undefined
  if (row.leg != null) {
    if (typeof row.leg !== 'string' || !LEG.test(row.leg))
      return bad('leg', 'must be up to 40 letters, digits, ~ or _')
    leg = row.leg
  }
  return {
    ok: true,
    transaction: {
      ...(kind ? { kind } : {}),
      ...(leg !== undefined ? { leg } : {}),
      occurredAt: new Date(at).toISOString(),
      amount,
      direction: row.direction,
      counterpartyName: name,
      counterpartyPhone: phone,
      description,
      receiptNumber: receipt,
      balance,
    },
  }
}
