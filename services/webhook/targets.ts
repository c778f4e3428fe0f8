import { checkDestination, type DestinationPolicy, isIpLiteral, type Resolver } from './ssrf.ts'

/** Where an attempt connects: the URL as registered and the checked addresses to try in turn. */
export interface Targets {
  original: URL
  /** Host name without IPv6 brackets: the Host header and TLS server name keep it. */
  host: string
  /** The URL with each checked address as its host, IPv4 first, at most four. */
  urls: URL[]
}

/** How long a check is used again, per resolver, policy and URL. */
export const TARGETS_TTL_MS = 1000

type Checked = Map<string, { at: number; targets: Promise<Targets> }>
const remembered = new WeakMap<Resolver, WeakMap<DestinationPolicy, Checked>>()

/**
 * The checked targets of a webhook URL (rejects with the reason it is refused). A check (URL
 * shape, name resolution, a verdict per address) costs a third of a bare signed POST, and a busy
 * endpoint is attempted thousands of times a second, so one check serves every attempt of the
 * next second: an attempt still connects only to addresses judged within the last second (the
 * resolver itself remembers names for 5 s). A refusal is remembered as long.
 */
export function targetsOf(
  url: string,
  policy: DestinationPolicy,
  resolve: Resolver,
): Promise<Targets> {
  let byPolicy = remembered.get(resolve)
  if (!byPolicy) {
    byPolicy = new WeakMap()
    remembered.set(resolve, byPolicy)
  }
  let checked = byPolicy.get(policy)
  if (!checked) {
    checked = new Map()
    byPolicy.set(policy, checked)
  }
  const now = performance.now()
  const hit = checked.get(url)
  if (hit && now - hit.at < TARGETS_TTL_MS) return hit.targets
  const targets = check(url, policy, resolve)
  if (checked.size >= 10_000) checked.clear()
  checked.set(url, { at: now, targets })
  return targets
}

async function check(url: string, policy: DestinationPolicy, resolve: Resolver): Promise<Targets> {
  const dest = await checkDestination(url, policy, { resolve })
  if (isIpLiteral(dest.host)) return { original: dest.url, host: dest.host, urls: [dest.url] }
  const ordered = [...dest.addresses].sort(
    (a, b) => Number(a.includes(':')) - Number(b.includes(':')),
  )
  const urls = ordered.slice(0, 4).map((address) => {
    const u = new URL(dest.url)
    u.hostname = address.includes(':') ? `[${address}]` : address
    return u
  })
  return { original: dest.url, host: dest.host, urls }
}
