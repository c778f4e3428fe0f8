import { CATEGORIES, type Category } from '../../schema/vocabulary.ts'

export { CATEGORIES, type Category }

export function isCategory(v: unknown): v is Category {
  return (CATEGORIES as readonly unknown[]).includes(v)
}

/** Lower case, letters and digits only, single spaces: what keyword rules and the model read. */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
}

/**
 * The key a description is remembered by after an override: normalised, without the tokens that
 * carry digits (receipt numbers, phone numbers, account numbers, dates), so "Pay Bill to 888880 -
 * KPLC PREPAID Acc. 5432" and the next month's bill share one key.
 */
export function descriptionKey(description: string): string {
  return keyOfNormalised(normalise(description))
}

/** `descriptionKey` of an already normalised description. */
export function keyOfNormalised(normalised: string): string {
  return normalised
    .replace(/[a-z0-9]*\d[a-z0-9]*/g, ' ')
    .replace(/ +/g, ' ')
    .trim()
}

/** The key a counterparty is remembered by: its normalised name, else its phone number. */
export function counterpartyKey(name?: string | null, phone?: string | null): string | null {
  const n = name ? normalise(name) : ''
  if (n) return n
  const p = phone?.replace(/\D/g, '')
  return p ? p.replace(/^0/, '254') : null
}

/**
 * Lessons are kept per direction: a person paid a salary may also pay for goods, and teaching one
 * must not relabel the other.
 */
export function lessonKey(direction: 'in' | 'out', key: string): string {
  return `${direction}:${key}`
}
