/**
 * Kenyan mobile numbers as people type them: `0712345678`, `0112345678`, `+254712345678`,
 * `254712345678` (spaces, dashes and brackets ignored). Safaricom's API takes only the
 * international form without the plus, `2547XXXXXXXX` or `2541XXXXXXXX`.
 *
 * @example
 * normalizePhone('0712 345 678') // '254712345678'
 * normalizePhone('+254112345678') // '254112345678'
 * normalizePhone('12345') // null
 */
export function normalizePhone(input: unknown): string | null {
  if (typeof input !== 'string' && typeof input !== 'number') return null
  const raw = String(input)
    .trim()
    .replace(/[\s\-().]/g, '')
  const m = /^(?:\+?254|0)([17]\d{8})$/.exec(raw)
  return m ? `254${m[1]}` : null
}

/** What a phone field accepts, for error messages and schema descriptions. */
export const PHONE_FORMATS = '07XXXXXXXX, 01XXXXXXXX, +2547XXXXXXXX, 2547XXXXXXXX (or +2541…/2541…)'

/**
 * A phone number as it may be shown to people other than its owner: the first four and the last
 * three digits, like Daraja's C2B v2 confirmations (`2547 ***** 678`). Already masked input is
 * returned unchanged.
 */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '')
  if (phone.includes('*') || digits.length < 9) return phone
  return `${digits.slice(0, 4)} ***** ${digits.slice(-3)}`
}
