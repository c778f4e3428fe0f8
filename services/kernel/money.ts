import { invalidField } from './errors.ts'

/**
 * Money is integer minor units (cents) everywhere inside; the API speaks decimals with at most
 * two places.
 *
 * @example
 * toMinor(12.5, 'amount') // 1250
 * toMajor(1250) // 12.5
 */
export function toMinor(value: unknown, field = 'amount'): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalidField(field, 'must be a number')
  }
  const cents = Math.round(value * 100)
  if (Math.abs(cents - value * 100) > 1e-6 * Math.max(1, Math.abs(value))) {
    throw invalidField(field, 'must have at most 2 decimal places')
  }
  if (!Number.isSafeInteger(cents)) throw invalidField(field, 'is too large')
  return cents
}

export function toMajor(cents: number): number {
  return Math.round(cents) / 100
}

/** Parses a statement-style amount such as "1,234.50" into cents; empty gives null. */
export function parseAmountText(text: string | undefined | null): number | null {
  if (text == null) return null
  const cleaned = text
    .replaceAll(',', '')
    .replace(/^KES\s*/i, '')
    .replace(/^Ksh\.?\s*/i, '')
    .trim()
  if (cleaned === '' || cleaned === '-') return null
  if (!/^-?\d+(\.\d{1,2})?$/.test(cleaned)) return null
  return Math.round(Number(cleaned) * 100)
}

/**
 * Cents of an amount the platform already trusts as money (an event's amount, a computed sum):
 * rounded to the nearest cent, never refused. Input from clients goes through `toMinor`.
 */
export function centsOf(amount: number): number {
  return Math.round(amount * 100)
}

/** A decimal figure rounded to two places (money in major units, or a ratio) for an answer. */
export function round2(value: number): number {
  return Math.round(value * 100) / 100
}
