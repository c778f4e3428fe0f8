/**
 * A phone number as a Kenyan reads it: `0712 345 678`. Accepts 2547…, +2547…, 07…, 7… and the
 * masked forms statements and C2B callbacks carry (`2547 ***** 601`, `25472****108`), whose
 * hidden digits stay hidden. Anything else is shown as given.
 */
export function localPhone(value: string | null | undefined): string {
  if (!value) return '—'
  const compact = value.replace(/[\s\-().]/g, '')
  if (!/^\+?[\d*]+$/.test(compact)) return value
  let local = compact.replace(/^\+/, '')
  if (local.startsWith('254')) local = `0${local.slice(3)}`
  else if (/^[17][\d*]{8}$/.test(local)) local = `0${local}`
  if (local.length !== 10 || !local.startsWith('0')) return value
  return `${local.slice(0, 4)} ${local.slice(4, 7)} ${local.slice(7)}`
}
