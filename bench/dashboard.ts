/**
 * Dashboard first-load weight: serves the dashboard the way the gateway does (Bun.serve `routes`
 * with the HTML import, production mode), fetches `/` and every asset it references (scripts,
 * stylesheets, and what the stylesheets reference), and prints the gzip-compressed total against
 * the 300 KB target, with the raw size as the reference.
 */
import { dashboardRoutes } from '../web/routes.ts'
import { report } from './support.ts'

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  routes: dashboardRoutes,
  fetch: () => new Response('not found', { status: 404 }),
})
const base = `http://127.0.0.1:${server.port}`

const started = performance.now()
const files: { url: string; type: string; raw: number; gzip: number }[] = []
const seen = new Set<string>()

async function load(url: string): Promise<string> {
  if (seen.has(url)) return ''
  seen.add(url)
  const res = await fetch(url)
  if (!res.ok) throw new Error(`${url}: ${res.status}`)
  const bytes = new Uint8Array(await res.arrayBuffer())
  files.push({
    url: url.replace(base, ''),
    type: res.headers.get('content-type') ?? '?',
    raw: bytes.length,
    gzip: Bun.gzipSync(bytes, { level: 9 }).length,
  })
  return new TextDecoder().decode(bytes)
}

const html = await load(`${base}/`)
const firstLoad = performance.now() - started
const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
for (const ref of refs) {
  if (/^(https?:)?\/\//.test(ref) && !ref.startsWith(base))
    throw new Error(`the page references another origin: ${ref}`)
  const url = new URL(ref, `${base}/`).href
  const text = await load(url)
  if (url.endsWith('.css'))
    for (const m of text.matchAll(/url\(["']?([^"')]+)["']?\)/g))
      if (!m[1]!.startsWith('data:')) await load(new URL(m[1]!, url).href)
}
server.stop(true)

for (const f of files)
  console.log(
    `  ${f.url.padEnd(40)} ${f.type.split(';')[0]!.padEnd(24)} raw ${(f.raw / 1024).toFixed(1).padStart(7)} KB  gzip ${(f.gzip / 1024).toFixed(1).padStart(6)} KB`,
  )
const raw = files.reduce((s, f) => s + f.raw, 0) / 1024
const gzip = files.reduce((s, f) => s + f.gzip, 0) / 1024
console.log(
  `  ${files.length} files; bundling and first fetch of / took ${firstLoad.toFixed(0)} ms`,
)
report({
  name: 'dashboard first load (gzip)',
  value: gzip,
  unit: 'KB',
  target: '< 300 KB',
  ok: gzip < 300,
  reference: { name: 'raw', value: raw },
})
