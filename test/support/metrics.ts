/**
 * Reads the platform's Prometheus registry from its loopback (`GET /metrics` needs no token from
 * this host): the sum of every sample of `name` whose labels include `labels`, 0 when none.
 * Counters such as `mmp_events_handled_total{outcome="duplicate"}` are the positive signal that a
 * repeat was received and dropped, so a test awaits them instead of sleeping.
 *
 * @example
 * const before = await metricValue(p.gateway, 'mmp_events_handled_total', { consumer: 'analytics' })
 */
export async function metricValue(
  gateway: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const res = await fetch(`${gateway}/metrics`)
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`)
  return sumSamples(await res.text(), name, labels)
}

/** The sum of the samples of `name` in Prometheus text whose labels include `labels`. */
export function sumSamples(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!m || m[1] !== name) continue
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    )
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3])
  }
  return sum
}
