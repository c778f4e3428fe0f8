import { routeOfDocument } from '../../schema/routes.ts'
import type { ServiceName } from '../kernel/context.ts'
import type { Discovery } from '../kernel/http-client.ts'

type Doc = {
  openapi?: string
  paths?: Record<string, Record<string, unknown>>
  components?: Record<string, Record<string, unknown>>
  tags?: Array<{ name: string; description?: string }>
}

/**
 * The document states each operation's security as the route manifest knows it: public routes
 * (login, refresh, JWKS, provider callbacks, …) `security: []`, every other one the bearer token,
 * so no public route inherits the document's default.
 */
function withSecurity(path: string, ops: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [method, op] of Object.entries(ops)) {
    const route = routeOfDocument(method, path)
    out[method] =
      route && op && typeof op === 'object'
        ? { ...op, security: route.access === 'token' ? [{ bearer: [] }] : [] }
        : op
  }
  return out
}

/**
 * The platform's OpenAPI document: every service's `/openapi.json` merged (paths are already
 * prefixed with `/api/v1/...`; components are merged by name, first one wins on a clash).
 * Fetched on demand and cached for `ttlMs`; a service that does not answer is listed under
 * `x-mmp-unavailable` and retried on the next request.
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
    const paths: Record<string, Record<string, unknown>> = {}
    const components: Record<string, Record<string, unknown>> = {}
    const tags = new Map<string, { name: string; description?: string }>()
    const missing: string[] = []
    docs.forEach((doc, i) => {
      if (!doc) {
        missing.push(opts.services[i]!)
        return
      }
      for (const [path, ops] of Object.entries(doc.paths ?? {}))
        paths[path] = { ...(paths[path] ?? {}), ...withSecurity(path, ops) }
      for (const [kind, entries] of Object.entries(doc.components ?? {})) {
        const into = components[kind] ?? {}
        components[kind] = into
        for (const [name, value] of Object.entries(entries ?? {})) into[name] ??= value
      }
      for (const tag of doc.tags ?? []) if (!tags.has(tag.name)) tags.set(tag.name, tag)
    })
    const doc: Record<string, unknown> = {
      openapi: docs.find((d) => d?.openapi)?.openapi ?? '3.1.0',
      info: {
        title: 'mmp API',
        version: opts.version,
        description:
          'Every route of the platform through the gateway. Send `Authorization: Bearer <access token>` from POST /api/v1/auth/login; errors are application/problem+json.',
      },
      servers: [{ url: '/' }],
      paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
      components,
      security: [{ bearer: [] }],
      ...(tags.size ? { tags: [...tags.values()] } : {}),
      ...(missing.length ? { 'x-mmp-unavailable': missing } : {}),
    }
    cached = { doc, at: Date.now(), complete: missing.length === 0 }
    return doc
  }

  return {
    async document(): Promise<Record<string, unknown>> {
      if (cached?.complete && Date.now() - cached.at < ttl) return cached.doc
      inflight ??= build().finally(() => {
        inflight = null
      })
      return inflight
    },
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
</style></head><body>
<header><h1 id="title">mmp API</h1></header>
<main><p id="desc"></p><input id="q" placeholder="Filter by path, summary or tag" autocomplete="off"><div id="ops">Loading /openapi.json…</div></main>
<script>
const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
const json = (v) => '<pre>' + esc(JSON.stringify(v, null, 2)) + '</pre>'
fetch('openapi.json').then((r) => r.json()).then((doc) => {
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
        if (op.parameters && op.parameters.length) body += '<b>Parameters</b>' + json(op.parameters.map((p) => ({ name: p.name, in: p.in, required: !!p.required, schema: p.schema })))
        const rb = op.requestBody && op.requestBody.content && (op.requestBody.content['application/json'] || Object.values(op.requestBody.content)[0])
        if (rb) body += '<b>Request body</b>' + json(rb.schema)
        for (const [status, r] of Object.entries(op.responses || {})) {
          const c = r.content && (r.content['application/json'] || Object.values(r.content)[0])
          body += '<b>' + esc(status) + '</b> ' + esc(r.description || '') + (c ? json(c.schema) : '')
        }
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
