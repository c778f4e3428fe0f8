import { routeOfDocument } from '../../schema/routes.ts'
import type { ServiceName } from '../kernel/context.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { hoistSchema } from '../kernel/openapi-components.ts'
import { HTTP_METHODS, mapOperationSchemas } from '../kernel/openapi-document.ts'
import { exampleOf } from '../kernel/openapi-examples.ts'
import {
  errorResponses,
  sharedComponents,
  successHeaders,
  takesIdempotencyKey,
} from '../kernel/openapi-problems.ts'
import { normalizeSchema } from '../kernel/openapi-schema.ts'
import { webhooksSection } from '../kernel/openapi-webhooks.ts'

type Doc = {
  openapi?: string
  paths?: Record<string, Record<string, unknown>>
  components?: Record<string, Record<string, unknown>>
  tags?: Array<{ name: string; description?: string }>
}
type Obj = Record<string, unknown>

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Operations whose handler answers without a body, or with another status than 200. */
const SUCCESS: Record<string, string> = {
  'post /api/v1/auth/logout': '204',
  'post /api/v1/billing/invoices/{invoice_id}/pay': '202',
}

/**
 * One operation as the platform answers it through the gateway: its security and its
 * problem+json errors from the route manifest, its success status (a DELETE without a body is
 * 204), the rate-limit and request-id headers, the Idempotency-Key and X-Request-Timeout
 * parameters, an example for each JSON body, and named resources as `$ref`s.
 */
function documentOperation(
  path: string,
  method: string,
  op: Obj,
  hoist: (s: unknown) => unknown,
): Obj {
  const route = routeOfDocument(method, path)
  const out = mapOperationSchemas(op, hoist)
  out.operationId ??= `${method}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c = '') => c.toUpperCase())}`
  if (route) out.security = route.access === 'token' ? [{ bearer: [] }] : []
  const params = Array.isArray(out.parameters) ? [...out.parameters] : []
  if (takesIdempotencyKey(op, route))
    params.push({ $ref: '#/components/parameters/IdempotencyKey' })
  params.push({ $ref: '#/components/parameters/RequestTimeout' })
  out.parameters = params
  const given = isObject(out.responses) ? out.responses : {}
  const responses: Obj = {}
  for (const [status, r] of Object.entries(given)) {
    if (!isObject(r)) continue
    const content = isObject(r.content) ? r.content : undefined
    responses[status] = {
      ...r,
      description:
        r.description && !/^Response for status/.test(String(r.description))
          ? r.description
          : describeStatus(status),
      headers: { ...successHeaders(route), ...(isObject(r.headers) ? r.headers : {}) },
      ...(content
        ? { content: withExamples(status.startsWith('2') ? withReplay(content, route) : content) }
        : {}),
    }
  }
  if (!Object.keys(responses).some((s) => s.startsWith('2'))) {
    const status = SUCCESS[`${method} ${path}`] ?? (method === 'delete' ? '204' : '200')
    responses[status] = {
      description: describeStatus(status),
      headers: successHeaders(route),
      ...(status === '204'
        ? {}
        : { content: { 'application/json': { schema: { type: 'object' }, example: {} } } }),
    }
  }
  out.responses = { ...responses, ...errorResponses(route, out, method) }
  if (isObject(out.requestBody) && isObject(out.requestBody.content))
    out.requestBody = { ...out.requestBody, content: withExamples(out.requestBody.content) }
  return out
}

/**
 * A create whose answer carries a secret shown once (the manifest's `shownOnce`) answers a replay
 * of the same Idempotency-Key without it, saying so in `shown_once`: its JSON body is either.
 */
function withReplay(content: Obj, route: ReturnType<typeof routeOfDocument>): Obj {
  const fields = route?.shownOnce ?? []
  const media = content['application/json']
  if (!fields.length || !isObject(media) || media.schema === undefined) return content
  const replay = {
    type: 'object',
    description: `A replay of this create (same Idempotency-Key): the first answer without ${fields.join(', ')}, shown once and not kept`,
    required: ['shown_once'],
    properties: { shown_once: { type: 'string', description: 'which fields were shown once' } },
    // The first answer's other fields, as described by the first schema.
    additionalProperties: true,
  }
  return { ...content, 'application/json': { ...media, schema: { anyOf: [media.schema, replay] } } }
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted: the outcome follows (callback, event or status route)',
  '204': 'No Content',
}
const describeStatus = (status: string) => STATUS_TEXT[status] ?? `Status ${status}`

let components: Obj = {}
function withExamples(content: Obj): Obj {
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      isObject(media) && media.schema && media.example === undefined && !media.examples
        ? type.includes('json')
          ? { ...media, example: exampleOf(media.schema, components) }
          : media
        : media,
    ]),
  )
}

/**
 * The platform's OpenAPI 3.1 document: every service's `/openapi.json` merged (paths are already
 * prefixed with `/api/v1/...`), each operation completed from the route manifest
 * (`documentOperation`), named resources hoisted into `components.schemas`, and the webhook
 * events under `webhooks`. Fetched on demand and cached for `ttlMs`; a service that does not
 * answer is listed under `x-mmp-unavailable` and retried on the next request.
 */
export function createOpenApi(opts: {
  discovery: Discovery
  services: readonly ServiceName[]
  version: string
  ttlMs?: number
  timeoutMs?: number
}) {
  const ttl = opts.ttlMs ?? 60_000
  let cached: { doc: Record<string, unknown>; at: number; complete: boolean } | null = null
  let inflight: Promise<Record<string, unknown>> | null = null

  const fetchOne = async (service: ServiceName): Promise<Doc | null> => {
    try {
      const res = await fetch(`${opts.discovery.pick(service)}/openapi.json`, {
        signal: AbortSignal.timeout(opts.timeoutMs ?? 1500),
      })
      return res.ok ? ((await res.json()) as Doc) : null
    } catch {
      return null
    }
  }

  const build = async () => {
    const docs = await Promise.all(opts.services.map(fetchOne))
    return mergeDocuments(docs, opts.services, opts.version)
  }

  return {
    async document(): Promise<Record<string, unknown>> {
      if (cached?.complete && Date.now() - cached.at < ttl) return cached.doc
      inflight ??= build()
        .then((doc) => {
          const missing = doc['x-mmp-unavailable'] as unknown[] | undefined
          cached = { doc, at: Date.now(), complete: !missing?.length }
          return doc
        })
        .finally(() => {
          inflight = null
        })
      return inflight
    },
  }
}

/**
 * Merges the services' documents (null: the service did not answer) into the platform's one.
 * Exported for tests; `x-mmp-schema-clashes` lists titles used for two different shapes.
 */
export function mergeDocuments(
  docs: ReadonlyArray<Doc | null>,
  services: readonly string[],
  version: string,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  const schemas: Obj = {}
  const clashes: string[] = []
  const hoist = (s: unknown) => hoistSchema(normalizeSchema(s), schemas, clashes)
  const tags = new Map<string, { name: string; description?: string }>()
  const missing: string[] = []
  components = schemas
  docs.forEach((doc, i) => {
    if (!doc) {
      missing.push(services[i]!)
      return
    }
    for (const [kind, entries] of Object.entries(doc.components ?? {})) {
      if (kind !== 'schemas') continue
      for (const [name, value] of Object.entries(entries ?? {})) schemas[name] ??= hoist(value)
    }
    for (const [path, ops] of Object.entries(doc.paths ?? {})) {
      const item: Obj = { ...(paths[path] ?? {}) }
      for (const [method, op] of Object.entries(ops))
        item[method] =
          HTTP_METHODS.includes(method) && isObject(op)
            ? documentOperation(path, method, op, hoist)
            : op
      paths[path] = item
    }
    for (const tag of doc.tags ?? []) if (!tags.has(tag.name)) tags.set(tag.name, tag)
  })
  for (const item of Object.values(paths))
    for (const op of Object.values(item))
      for (const t of (isObject(op) && Array.isArray(op.tags) ? op.tags : []) as string[])
        if (!tags.has(t)) tags.set(t, { name: t, description: `The ${t} routes` })
  if (!tags.has('webhooks')) tags.set('webhooks', { name: 'webhooks', description: 'Webhooks' })
  return {
    openapi: '3.1.0',
    info: {
      title: 'mmp API',
      version,
      description:
        'Every route of the platform through the gateway. Send `Authorization: Bearer <access token>` from POST /api/v1/auth/login; errors are application/problem+json (RFC 9457). Broker events: /asyncapi.json.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-mmp' },
    },
    servers: [{ url: '/', description: 'this gateway' }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    webhooks: webhooksSection(),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: Object.fromEntries(
        Object.entries({ ...schemas, ...sharedComponents.schemas }).sort(([a], [b]) =>
          a.localeCompare(b),
        ),
      ),
      headers: sharedComponents.headers,
      parameters: sharedComponents.parameters,
    },
    security: [{ bearer: [] }],
    tags: [...tags.values()].sort((a, b) => a.name.localeCompare(b.name)),
    ...(missing.length ? { 'x-mmp-unavailable': missing } : {}),
    ...(clashes.length ? { 'x-mmp-schema-clashes': clashes } : {}),
  }
}

/**
 * `/docs`: one self-contained page (no CDN, no external request) that reads `/openapi.json` and
 * lists every operation by tag with its parameters, body and responses.
 */
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>mmp API</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:18px}
main{max-width:1040px;margin:0 auto;padding:16px 24px}
input{width:100%;padding:8px;font-size:14px;margin:8px 0 16px;border:1px solid #c8ccd4;border-radius:4px}
h2{margin:24px 0 8px;font-size:16px;border-bottom:1px solid #d5d9e0;padding-bottom:4px}
details{background:#fff;border:1px solid #dde1e7;border-radius:4px;margin:6px 0}
summary{cursor:pointer;padding:8px 10px;display:flex;gap:10px;align-items:baseline}
.m{font:600 12px ui-monospace,monospace;min-width:58px;text-align:center;border-radius:3px;padding:2px 4px;color:#fff}
.get{background:#2f7ed8}.post{background:#2e9d57}.put{background:#c58b14}.patch{background:#8a5cc2}.delete{background:#c9453b}
code,pre{font:12px ui-monospace,monospace}pre{background:#f1f3f6;padding:8px;overflow:auto;margin:4px 0}
.body{padding:0 12px 10px}.lock{color:#8a94a6;font-size:12px}
table{border-collapse:collapse;width:100%;margin:4px 0 10px}td,th{border:1px solid #e3e6eb;padding:4px 6px;text-align:left;vertical-align:top}th{background:#f1f3f6}
ul{margin:2px 0;padding-left:18px}.t{color:#5a6475;font:12px ui-monospace,monospace}
</style></head><body>
<header><h1 id="title">mmp API</h1></header>
<main><p id="desc"></p><input id="q" placeholder="Filter by path, summary or tag" autocomplete="off"><div id="ops">Loading /openapi.json…</div></main>
<script>
const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
let doc = {}
const deref = (x) => { let v = x; for (let i = 0; v && v.$ref && i < 8; i++) v = v.$ref.split('/').slice(1).reduce((o, k) => o && o[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc); return v || {} }
const typeOf = (s0) => { const s = deref(s0); if (!s) return ''; if (s0 && s0.$ref) return s0.$ref.split('/').pop(); const t = Array.isArray(s.type) ? s.type.join(' | ') : s.type || (s.anyOf ? s.anyOf.map(typeOf).join(' | ') : s.oneOf ? s.oneOf.map(typeOf).join(' | ') : 'any'); const c = []; if (s.enum) c.push('one of ' + s.enum.join(', ')); for (const k of ['format', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern']) if (s[k] !== undefined) c.push(k + ' ' + s[k]); return t + (t === 'array' && s.items ? ' of ' + typeOf(s.items) : '') + (c.length ? ' (' + c.join('; ') + ')' : '') }
const tree = (s0, depth = 0) => { const s = deref(s0); const item = s.type === 'array' ? deref(s.items) : s; if (!item.properties || depth > 4) return '<div class="t">' + esc(typeOf(s0)) + '</div>'; const req = item.required || []; return (s0 && s0.$ref ? '<div class="t">' + esc(typeOf(s0)) + '</div>' : '') + '<ul>' + Object.entries(item.properties).map(([k, v]) => '<li><code>' + esc(k) + '</code>' + (req.includes(k) ? ' *' : '') + ' <span class="t">' + esc(typeOf(v)) + '</span>' + (deref(v).description ? ' — ' + esc(deref(v).description) : '') + (deref(v).properties || (deref(v).items && deref(deref(v).items).properties) ? tree(v, depth + 1) : '') + '</li>').join('') + '</ul>' }
const curl = (path, method, op, rb) => { let c = 'curl -X ' + method.toUpperCase() + " '" + location.origin + path + "'"; if (op.security && op.security.length) c += " \\\\\\n  -H 'Authorization: Bearer $TOKEN'"; if (rb) c += " \\\\\\n  -H 'Content-Type: application/json' \\\n  -d '" + JSON.stringify(rb.example ?? {}) + "'"; return c }
fetch('openapi.json').then((r) => r.json()).then((d) => {
  doc = d
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version
  document.getElementById('desc').textContent = doc.info.description || ''
  const groups = {}
  for (const [path, ops] of Object.entries(doc.paths || {}))
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const tag = (op.tags && op.tags[0]) || path.split('/')[3] || 'other'
      ;(groups[tag] ||= []).push({ path, method, op })
    }
  const render = (filter) => {
    const f = filter.toLowerCase()
    let html = ''
    for (const tag of Object.keys(groups).sort()) {
      const items = groups[tag].filter((o) => !f || (o.path + ' ' + (o.op.summary || '') + ' ' + tag).toLowerCase().includes(f))
      if (!items.length) continue
      html += '<h2>' + esc(tag) + '</h2>'
      for (const { path, method, op } of items) {
        let body = ''
        if (op.description) body += '<p>' + esc(op.description) + '</p>'
        const params = (op.parameters || []).map(deref)
        if (params.length) body += '<b>Parameters</b><table><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr>' + params.map((p) => '<tr><td><code>' + esc(p.name) + '</code>' + (p.required ? ' *' : '') + '</td><td>' + esc(p.in) + '</td><td>' + esc(typeOf(p.schema)) + '</td><td>' + esc(p.description || (p.schema && p.schema.description) || '') + '</td></tr>').join('') + '</table>'
        const rb = op.requestBody && op.requestBody.content && (op.requestBody.content['application/json'] || Object.values(op.requestBody.content)[0])
        if (rb) body += '<b>Request body</b>' + tree(rb.schema)
        body += '<b>Responses</b><table><tr><th>Status</th><th>Description</th><th>Body</th></tr>'
        for (const [status, r] of Object.entries(op.responses || {})) {
          const c = r.content && Object.entries(r.content)[0]
          body += '<tr><td>' + esc(status) + '</td><td>' + esc(r.description || '') + '</td><td>' + (c ? esc(c[0]) + tree(c[1].schema) : '') + '</td></tr>'
        }
        body += '</table><b>Example</b><pre>' + esc(curl(path, method, op, rb)) + '</pre>'
        html += '<details><summary><span class="m ' + method + '">' + method.toUpperCase() + '</span><code>' + esc(path) + '</code> ' + esc(op.summary || '') + (op.security && op.security.length ? ' <span class="lock">bearer</span>' : '') + '</summary><div class="body">' + (body || 'No details.') + '</div></details>'
      }
    }
    document.getElementById('ops').innerHTML = html || 'No operations.'
  }
  render('')
  document.getElementById('q').addEventListener('input', (e) => render(e.target.value))
}).catch((e) => { document.getElementById('ops').textContent = 'Could not load /openapi.json: ' + e })
</script></body></html>
`
