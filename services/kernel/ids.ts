/**
 * Prefixed, time-ordered identifiers (UUIDv7 underneath, hex without dashes).
 *
 * @example
 * newId('txn') // 'txn_0192f0c4e5a87c3d9e1f2a3b4c5d6e7f'
 */
export type IdPrefix =
  | 'txn'
  | 'pay'
  | 'b2c'
  | 'inv'
  | 'usr'
  | 'whe'
  | 'msg'
  | 'del'
  | 'evt'
  | 'rul'
  | 'sub'
  | 'req'
  | 'aud'
  | 'ses'
  | 'imp'
  | 'use'
  | 'pln'
  | 'key'
  | 'job'

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${Bun.randomUUIDv7().replaceAll('-', '')}`
}

/**
 * An identifier derived from what it names, in the same shape as `newId`: the same parts always
 * give the same id, so a restored or replayed platform that does the same thing again names it
 * the same way (a receiver that deduplicates by id sees a repeat, not a new fact).
 *
 * @example
 * derivedId('txn', 'pay_0192f0…') // 'txn_' + 32 hex digits of SHA-256('pay_0192f0…')
 */
export function derivedId(prefix: IdPrefix, ...parts: string[]): string {
  const hash = new Bun.CryptoHasher('sha256').update(parts.join('\u0000')).digest('hex')
  return `${prefix}_${hash.slice(0, 32)}`
}

/** A request id as the gateway makes it: a plain UUIDv7. */
export function newRequestId(): string {
  return Bun.randomUUIDv7()
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/

/** A client-sent X-Request-ID is kept only when it is a sane token. */
export function isValidRequestId(value: string | null | undefined): value is string {
  return !!value && REQUEST_ID.test(value)
}
