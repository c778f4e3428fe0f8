import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/**
 * Where webhooks may go (DESIGN §9, §13). Only public unicast addresses, checked on the resolved
 * addresses both when an endpoint is registered and right before every attempt (the attempt then
 * connects to the address that was checked), so DNS rebinding and redirects reach nothing
 * internal. Loopback is allowed only in insecure (development) mode; `allowHosts` names hosts,
 * addresses or CIDR ranges exempt from the address check.
 */
export interface DestinationPolicy {
  allowInsecure: boolean
  allowHosts: readonly string[]
}

export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DestinationRefused'
  }
}

/** A URL checked for its scheme and host, and the addresses it resolved to. */
export interface Destination {
  url: URL
  /** Host name without IPv6 brackets. */
  host: string
  addresses: string[]
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase()

const v4 = (bytes: readonly number[]) => new ipaddr.IPv4(bytes.slice(-4) as number[])

/**
 * The IPv4 address an IPv6 address carries and that traffic to it ends up at, or null. Covered:
 * IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96` (deprecated but still routed by some
 * stacks, and what `https://[::127.0.0.1]/` becomes after URL parsing), NAT64 `64:ff9b::/96`
 * (RFC 6052, a DNS64 network answers IPv4-only names with it) and 6to4 `2002::/16`, whose next
 * 32 bits are the IPv4 address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const b = address.toByteArray()
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  if (address.isIPv4MappedAddress()) return address.toIPv4Address()
  // ::/96 without :: and ::1, which are their own (refused) ranges.
  if (zeros(0, 12) && !(zeros(12, 15) && (b[15] ?? 0) <= 1)) return v4(b)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4(b)
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b.slice(2, 6))
  return null
}

/**
 * The address whose range decides: an IPv6 address that embeds an IPv4 one (mapped, compatible,
 * NAT64, 6to4) is judged by that IPv4 address, so none of them is a way to reach 127.0.0.1.
 */
export function normaliseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6') return embeddedIPv4(parsed as ipaddr.IPv6) ?? parsed
  return parsed
}

/**
 * A pure check of a string, remembered (bounded like the resolver cache): every attempt checks its
 * destination again, and ipaddr's parsing and range lookups cost more than the rest of an
 * attempt's own work.
 */
function remembered<T>(check: (key: string) => T): (key: string) => T {
  const answers = new Map<string, T>()
  return (key) => {
    if (answers.has(key)) return answers.get(key) as T
    const answer = check(key)
    if (answers.size >= 10_000) answers.clear()
    answers.set(key, answer)
    return answer
  }
}

/** The host is an IP address literal rather than a name. */
export const isIpLiteral = remembered((host) => ipaddr.isValid(host))

export const isLoopback = remembered((address) => {
  try {
    return normaliseAddress(address).range() === 'loopback'
  } catch {
    return false
  }
})

function allowListed(host: string, address: string | null, allowHosts: readonly string[]) {
  for (const entry of allowHosts) {
    const e = entry.trim().toLowerCase()
    if (!e) continue
    if (e === host) return true
    if (address && e.includes('/')) {
      try {
        const [range, bits] = ipaddr.parseCIDR(e)
        const a = normaliseAddress(address)
        if (a.kind() === range.kind() && a.match([range, bits] as never)) return true
      } catch {}
    } else if (address && ipaddr.isValid(e)) {
      try {
        if (normaliseAddress(e).toString() === normaliseAddress(address).toString()) return true
      } catch {}
    }
  }
  return false
}

/** Why an address may not receive webhooks, or null when it may. */
export function addressProblem(
  host: string,
  address: string,
  policy: DestinationPolicy,
): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = normaliseAddress(address)
  } catch {
    return `'${address}' is not an IP address`
  }
  if (allowListed(host, address, policy.allowHosts)) return null
  const range = parsed.range()
  if (range === 'unicast') return null
  if (range === 'loopback' && policy.allowInsecure) return null
  const label = parsed.toString() === '169.254.169.254' ? 'metadata' : range
  const via = parsed.toString() === address.toLowerCase() ? '' : ` (embedded in ${address})`
  return `${host} resolves to ${parsed.toString()}${via}, a ${label} address`
}

const HTTP_LOOPBACK_ONLY = 'must be an https URL (plain http only to a loopback address)'

/** Checks scheme and form of a webhook URL (no network). */
export function checkUrlShape(raw: string, policy: DestinationPolicy): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new DestinationRefused('must be an absolute URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new DestinationRefused('must be an https URL')
  if (url.username || url.password)
    throw new DestinationRefused('must not carry credentials in the URL')
  if (url.hash) throw new DestinationRefused('must not have a fragment')
  const host = hostOf(url)
  if (!host) throw new DestinationRefused('must name a host')
  if (url.protocol === 'http:') {
    if (!policy.allowInsecure) throw new DestinationRefused('must be an https URL')
    if (isIpLiteral(host) && !isLoopback(host)) throw new DestinationRefused(HTTP_LOOPBACK_ONLY)
  }
  return url
}

export type Resolver = (host: string) => Promise<string[]>

/** The system resolver, given up on after 3 s (a name that does not answer is unresolvable). */
export const systemResolver: Resolver = async (host) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`resolving ${host} timed out`)), 3000)
  })
  try {
    const all = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout])
    return all.map((a) => a.address)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Resolves the URL's host and checks every address. `unresolvable: 'allow'` lets registration
 * accept a name that does not resolve yet (the attempt-time check still guards delivery).
 */
export async function checkDestination(
  raw: string,
  policy: DestinationPolicy,
  opts: { resolve?: Resolver; unresolvable?: 'allow' | 'refuse' } = {},
): Promise<Destination> {
  const url = checkUrlShape(raw, policy)
  const host = hostOf(url)
  let addresses: string[]
  if (isIpLiteral(host)) addresses = [host]
  else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host)
    } catch {
      addresses = []
    }
    if (addresses.length === 0) {
      if (opts.unresolvable === 'allow' && url.protocol === 'https:')
        return { url, host, addresses }
      throw new DestinationRefused(`${host} does not resolve`)
    }
  }
  for (const address of addresses) {
    const problem = verdict(policy, url.protocol, host, address)
    if (problem) throw new DestinationRefused(problem)
  }
  return { url, host, addresses }
}

/** Remembered verdicts per policy object (a policy is configuration: it does not change). */
const verdicts = new WeakMap<DestinationPolicy, Map<string, string | null>>()

/** Why `address` may not receive webhooks for this scheme and host, or null when it may. */
function verdict(policy: DestinationPolicy, protocol: string, host: string, address: string) {
  let answers = verdicts.get(policy)
  if (!answers) {
    answers = new Map()
    verdicts.set(policy, answers)
  }
  const key = `${protocol}//${host}/${address}`
  let answer = answers.get(key)
  if (answer === undefined) {
    answer =
      protocol === 'http:' && !isLoopback(address)
        ? HTTP_LOOPBACK_ONLY
        : addressProblem(host, address, policy)
    if (answers.size >= 10_000) answers.clear()
    answers.set(key, answer)
  }
  return answer
}

/**
 * Remembers answers for `ttlMs`. Safe against rebinding because an attempt connects to the very
 * address that was checked, whatever the name resolves to later.
 */
export function cachedResolver(inner: Resolver, ttlMs: number): Resolver {
  const cache = new Map<string, { at: number; addresses: string[] }>()
  return async (host) => {
    const hit = cache.get(host)
    if (hit && Date.now() - hit.at < ttlMs) return hit.addresses
    const addresses = await inner(host)
    if (cache.size > 10_000) cache.clear()
    cache.set(host, { at: Date.now(), addresses })
    return addresses
  }
}
