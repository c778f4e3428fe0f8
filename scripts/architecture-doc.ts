/**
 * Writes the generated parts of ARCHITECTURE.md (between `<!-- generated:NAME -->` and
 * `<!-- /generated:NAME -->`) from the code: the parts with their ports, route segments and tables,
 * the broker topics with their publishers and consumers (schema/topic-registry.ts), and a request's
 * path. `bun scripts/architecture-doc.ts` after a change; test/architecture-doc.test.ts fails when
 * the file, the registry and the code disagree.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { getTableName, is, Table } from 'drizzle-orm'
import { basePorts } from '../daemon/config.ts'
import { type Topic, topics } from '../schema/events.ts'
import * as kernelTables from '../schema/kernel.ts'
import { findRoute, type Owner, segmentOwners } from '../schema/routes.ts'
import { consumerHomes, topicRegistry } from '../schema/topic-registry.ts'
import { webhookSourceTopics } from '../schema/webhook-events.ts'
import { markdownTable } from './markdown-table.ts'

const root = join(import.meta.dir, '..')
export const architecturePath = join(root, 'ARCHITECTURE.md')

type Registry = Record<Topic, { publishers: readonly string[]; consumers: readonly string[] }>
const registry: Registry = topicRegistry

/** Each service's own tables (the kernel's outbox, inbox and idempotency tables left out). */
const shared = new Set<unknown>(Object.values(kernelTables).filter((v) => is(v, Table)))
const tablesOf: Record<string, string[]> = {}
for (const service of readdirSync(join(root, 'schema'), { withFileTypes: true })) {
  if (!service.isDirectory()) continue
  const mod: Record<string, unknown> = await import(join(root, 'schema', service.name, 'tables.ts'))
  tablesOf[service.name] = Object.values(mod)
    .filter((v): v is Table => is(v, Table) && !shared.has(v))
    .map((t) => getTableName(t))
    .sort()
}

/** Production sources (tests left out) of services/ and daemon/, by path from the root. */
export function readSources(): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name)
      if (e.isDirectory()) walk(full)
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
        out.set(relative(root, full), readFileSync(full, 'utf8'))
    }
  }
  walk(join(root, 'services'))
  walk(join(root, 'daemon'))
  return out
}

const topicByKey = new Map<string, Topic>(Object.entries(topics))
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1')

/**
 * What the code does with each topic: `topic: topics.x` in a service's file is a publication (the
 * argument of `emitEvent`); any other `topics.x` in a file that calls `subscribe…(` is consumed by
 * that file's home (`services/<name>`, or the daemon file itself), and so is each of
 * `webhookSourceTopics` (schema/webhook-events.ts) in a file that subscribes to them. The kernel is
 * left out: it carries events for everyone and names topics only in examples.
 */
export function scanTopicUse(sources: Map<string, string>) {
  const published = new Map<Topic, Set<string>>()
  const consumed = new Map<string, Set<Topic>>()
  const add = <K, V>(m: Map<K, Set<V>>, k: K, v: V) => m.set(k, (m.get(k) ?? new Set()).add(v))
  for (const [path, raw] of sources) {
    const service = /^services\/([^/]+)\//.exec(path)?.[1]
    if (service === 'kernel') continue
    const text = withoutComments(raw)
    const calls = /\bsubscribe\w*\(/.test(text)
    const home = service ? `services/${service}` : path
    for (const m of text.matchAll(/(topic:\s*)?\btopics\.(\w+)/g)) {
      const topic = topicByKey.get(m[2]!)
      if (!topic) continue
      if (m[1] && service) add(published, topic, service)
      else if (!m[1] && calls) add(consumed, home, topic)
    }
    if (calls && /\bwebhookSourceTopics\b/.test(text))
      for (const topic of webhookSourceTopics) add(consumed, home, topic)
  }
  return { published, consumed }
}

/** Where the registry and the code disagree, one sentence each (empty when they agree). */
export function registryDrift(sources: Map<string, string>, reg: Registry = registry): string[] {
  const { published, consumed } = scanTopicUse(sources)
  const out: string[] = []
  const list = (s: Iterable<string>) => [...s].sort().join(', ') || 'nobody'
  for (const topic of Object.keys(reg) as Topic[]) {
    const code = list(published.get(topic) ?? [])
    const declared = list(reg[topic].publishers)
    if (code !== declared)
      out.push(`${topic}: published by ${code} in the code, by ${declared} in the registry`)
  }
  const homes = new Set([...Object.values(consumerHomes), ...consumed.keys()])
  for (const home of [...homes].sort()) {
    const names = Object.entries(consumerHomes).filter(([, h]) => h === home)
    const declared = (Object.keys(reg) as Topic[]).filter((t) =>
      names.some(([c]) => reg[t].consumers.includes(c)),
    )
    const code = list(consumed.get(home) ?? [])
    if (code !== list(declared))
      out.push(`${home}: consumes ${code} in the code, ${list(declared)} in the registry`)
  }
  return out
}

const code = (s: string) => `\`${s}\``

const segmentsOf = (service: string) =>
  Object.entries(segmentOwners)
    .filter(([, owner]) => owner === service)
    .map(([s]) => code(s))
    .join(', ')

function partsTable(reg: Registry): string {
  const topicsOf = (role: 'publishers' | 'consumers', who: string) =>
    (Object.keys(reg) as Topic[])
      .filter((t) => reg[t][role].includes(who))
      .map((t) => t.replace(/^mobilemoney\./, ''))
      .join(', ')
  const rows = Object.entries(basePorts).map(([part, port]) => [
    part,
    String(port),
    segmentsOf(part),
    (tablesOf[part] ?? []).join(', '),
    topicsOf('publishers', part),
    topicsOf('consumers', part),
  ])
  return markdownTable(
    ['part', 'port', '`/api/v1/…`', 'tables it owns', 'publishes', 'consumes'],
    rows,
  )
}

function topicsTable(reg: Registry): string {
  const rows = (Object.keys(reg) as Topic[]).map((t) => [
    code(t),
    reg[t].publishers.join(', '),
    reg[t].consumers
      .map((c) => `${c} (${consumerHomes[c as keyof typeof consumerHomes] ?? '?'})`)
      .join(', '),
  ])
  return markdownTable(['topic', 'published by', 'consumed by (where)'], rows)
}

/**
 * The way one request travels, read from the route manifest, the tables and the registry: the
 * service the route reaches writes `writes` (tables it owns) and publishes the first of `via`, a consumer of each topic publishes the
 * next, and the webhook service consumes the last (each link is checked, so a registry change
 * that breaks the path stops the generator).
 */
export function requestPath(
  method: string,
  path: string,
  writes: readonly string[],
  via: readonly Topic[],
  reg: Registry = registry,
): string {
  const route = findRoute(method, path)
  if (!route) throw new Error(`no route ${method} ${path} in schema/routes.ts`)
  const service: Owner = route.service
  const missing = writes.filter((t) => !tablesOf[service]?.includes(t))
  if (missing.length) throw new Error(`schema/${service}/tables.ts has no ${missing.join(', ')}`)
  const idempotent = route.create ? ', honours Idempotency-Key' : ''
  const steps = [
    `client → **gateway** :${basePorts.gateway} ${code(`${method} ${path}`)} (${route.access} access, ${route.budget} budget${idempotent}; schema/routes.ts)`,
    `gateway → **${service}** :${basePorts[service]} (segment ${code(route.segments[3]!)}), which answers at once`,
    `when the provider's callback settles it, ${service} writes ${writes.map(code).join(', ')} and the event's outbox row in one transaction (schema/${service}/tables.ts)`,
  ]
  let from: string[] = [service]
  for (const t of via) {
    const by = reg[t].publishers.filter((p) => from.includes(p))
    if (!by.length) throw new Error(`${t} is not published by ${from.join(' or ')}`)
    steps.push(`**${by.join(', ')}**'s relay publishes ${code(t)} → ${reg[t].consumers.join(', ')}`)
    from = [...reg[t].consumers]
  }
  if (!from.includes('webhook')) throw new Error(`webhook does not consume ${via.at(-1)}`)
  steps.push(
    '**webhook** (its inbox row and the deliveries in one transaction) → a signed delivery to each endpoint of the tenant subscribed to the event, retried on its schedule',
  )
  return steps.map((s, i) => `${i + 1}. ${s}`).join('\n')
}

/** The generated sections, by marker name. */
export function generatedSections(reg: Registry = registry): Record<string, string> {
  return {
    parts: partsTable(reg),
    topics: topicsTable(reg),
    'request-path': requestPath(
      'POST',
      '/api/v1/payments/stkpush',
      ['payments', 'audit_log'],
      [topics.transactionsSuccess, topics.transactionsCategorized],
      reg,
    ),
  }
}

/** `doc` with each generated section replaced by what the code says now. */
export function regenerate(doc: string, reg: Registry = registry): string {
  let out = doc
  for (const [name, body] of Object.entries(generatedSections(reg))) {
    const open = `<!-- generated:${name} -->`
    const close = `<!-- /generated:${name} -->`
    const a = out.indexOf(open)
    const b = out.indexOf(close)
    if (a < 0 || b < a) throw new Error(`ARCHITECTURE.md lacks ${open} … ${close}`)
    out = `${out.slice(0, a + open.length)}\n${body}\n${out.slice(b)}`
  }
  return out
}

if (import.meta.main) {
  const drift = registryDrift(readSources())
  if (drift.length)
    console.error(`schema/topic-registry.ts disagrees with the code:\n${drift.join('\n')}`)
  writeFileSync(architecturePath, regenerate(readFileSync(architecturePath, 'utf8')))
  console.log(`wrote ${architecturePath}`)
  if (drift.length) process.exit(1)
}
