/**
 * Dashboard first-load weight: fetches `/` and every asset it references (scripts, stylesheets,
 * and what the stylesheets reference) and prints the gzip-compressed total against the 300 KB
 * target, with the raw size as the reference. Measured twice: served the way `mmp serve` does
 * from source (Bun.serve `routes` with the HTML import, production mode), and from an executable
 * compiled the way scripts/build.ts builds `dist/mmp`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pickOffset } from '../test/support/platform.ts'
import { dashboardRoutes } from '../web/routes.ts'
import { report } from './support.ts'

interface Loaded {
  url: string
  type: string
  raw: number
  gzip: number
}

async function firstLoad(base: string): Promise<Loaded[]> {
  const files: Loaded[] = []
  const seen = new Set<string>()
  const load = async (url: string): Promise<string> => {
    if (seen.has(url)) return ''
    seen.add(url)
    const res = await fetch(url)
    if (!res.ok) throw new Error(`${url}: ${res.status}`)
    const bytes = new Uint8Array(await res.arrayBuffer())
    files.push({
      url: url.replace(base, ''),
      type: (res.headers.get('content-type') ?? '?').split(';')[0]!,
      raw: bytes.length,
      gzip: Bun.gzipSync(bytes, { level: 9 }).length,
    })
    return new TextDecoder().decode(bytes)
  }
  const html = await load(`${base}/`)
  for (const [, ref] of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    if (ref!.startsWith('data:')) continue
    if (/^(https?:)?\/\//.test(ref!) && !ref!.startsWith(base))
      throw new Error(`the page references another origin: ${ref}`)
    const url = new URL(ref!, `${base}/`).href
    const text = await load(url)
    if (url.endsWith('.css'))
      for (const m of text.matchAll(/url\(["']?([^"')]+)["']?\)/g))
        if (!m[1]!.startsWith('data:')) await load(new URL(m[1]!, url).href)
  }
  return files
}

function print(title: string, files: Loaded[]) {
  console.log(title)
  for (const f of files)
    console.log(
      `  ${f.url.padEnd(24)} ${f.type.padEnd(16)} raw ${(f.raw / 1024).toFixed(1).padStart(6)} KB  gzip ${(f.gzip / 1024).toFixed(1).padStart(5)} KB`,
    )
  const raw = files.reduce((s, f) => s + f.raw, 0) / 1024
  const gzip = files.reduce((s, f) => s + f.gzip, 0) / 1024
  report({
    name: `dashboard first load, ${title} (gzip)`,
    value: gzip,
    unit: 'KB',
    target: '< 300 KB',
    ok: gzip < 300,
    reference: { name: 'raw', value: raw },
  })
}

// 1. From source, as `mmp serve` serves it.
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false,
  routes: dashboardRoutes,
  fetch: () => new Response('not found', { status: 404 }),
})
print('mmp serve from source', await firstLoad(`http://127.0.0.1:${server.port}`))
server.stop(true)

// 2. From the executable, built like scripts/build.ts builds dist/mmp.
const dir = mkdtempSync(join(tmpdir(), 'mmp-bench-dashboard-'))
try {
  const root = join(import.meta.dir, '..')
  const exe = join(dir, 'mmp')
  const build = Bun.spawnSync(
    [
      process.execPath,
      'build',
      '--compile',
      '--minify-syntax',
      '--sourcemap=none',
      join(root, 'cmd/main.ts'),
      '--outfile',
      exe,
    ],
    { cwd: root, stdout: 'ignore', stderr: 'pipe' },
  )
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  const offset = await pickOffset()
  const proc = Bun.spawn([exe, 'serve', '--data-dir', join(dir, 'data')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      MMP_PORT_OFFSET: String(offset),
      MMP_OPERATOR_PASSWORD: 'bench-dashboard-password',
      MMP_LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  try {
    const base = `http://127.0.0.1:${9000 + offset}`
    const deadline = Date.now() + 20_000
    while (
      !(await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error('the executable did not start')
      await Bun.sleep(50)
    }
    print('dist/mmp executable', await firstLoad(base))
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
