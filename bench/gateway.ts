/**
 * `bun bench/gateway.ts`: two authenticated GETs, each direct to its service's port, through the
 * `mmp serve --workers 0` (every part, gateway dispatching in-process, one worker per core) and
 * through nginx (1 worker) as a plain reverse proxy to the same service port, measured with wrk in
 * one run; then the same through `mmp serve --workers 1`, to show what the workers add:
 * - real: `/api/v1/analytics/summary` for a tenant with a year of data (the route users take);
 * - light: `/api/v1/auth/me` (token verified, no database read).
 * Targets (issue 21, DESIGN §14): real route gateway p99 added ≤ 0.3 ms at 1 connection;
 * gateway throughput ≥ 0.6 × nginx's at 16 and 64 connections. nginx and wrk are required.
 * Default workers vs 1 on the real route: ≥ 1.5× on 2 cores.
 * Latency at 1 connection comes from one client taking the targets in turn, request by request
 * (BENCH_SAMPLES each, default 5000); throughput from wrk, rounds interleaving the targets.
 * BENCH_ROUTES=real|light runs one; BENCH_SECONDS, BENCH_ROUNDS as before; BENCH_WORKERS=N
 * measures N workers instead of the default.
 */
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { basePorts } from '../daemon/config.ts'
import { generateDemo } from '../services/parser/demo.ts'
import { interleavedLatency, percentile, SMOKE, sized } from './support.ts'

const NGINX = '/usr/sbin/nginx'
const WRK = Bun.which('wrk')
if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx`)
if (!WRK) throw new Error('wrk is missing: apt-get install wrk')

const root = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'mmp-bench-gateway-'))
const seconds = Number(process.env.BENCH_SECONDS ?? sized(3, 1))
const rounds = Number(process.env.BENCH_ROUNDS ?? sized(3, 1))
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? sized(5000, 100))

const free = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

async function pickOffset(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const offset = 30000 + 100 * Math.floor(Math.random() * 200)
    const ports = [...Object.values(basePorts), 9001].map((p) => p + offset)
    if ((await Promise.all(ports.map(free))).every(Boolean)) return offset
  }
  throw new Error('no free port range')
}

const offset = await pickOffset()
const gateway = `http://127.0.0.1:${9000 + offset}`
const directAuth = `http://127.0.0.1:${basePorts.auth + offset}`
const directAnalytics = `http://127.0.0.1:${basePorts.analytics + offset}`
const nginxPort = 9001 + offset
const proxied = `http://127.0.0.1:${nginxPort}`
const password = 'bench-operator-password'

// BENCH_PROFILE=<dir>: the server writes its CPU profile (markdown) there on exit.
const profile = process.env.BENCH_PROFILE
  ? ['--cpu-prof-md', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
  : []
let mmp: ReturnType<typeof Bun.spawn> | null = null
/** `mmp serve` with `workers` processes (0: one per core) on a data dir of its own. */
function startMmp(workers: number) {
  const data = join(dir, `data-${workers}`)
  mmp = Bun.spawn([process.execPath, ...profile, join(root, 'cmd/main.ts'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      MMP_DATA_DIR: data,
      MMP_PORT_OFFSET: String(offset),
      MMP_OPERATOR_EMAIL: 'bench@mmp.test',
      MMP_OPERATOR_PASSWORD: password,
      MMP_LOG_FORMAT: 'json',
      MMP_WORKERS: String(workers),
      // The bench measures proxying, not the limiter refusing: lift every tier's rate.
      MMP_RATE_LIMIT_FREE: '1000000',
      MMP_RATE_LIMIT_PRO: '1000000',
      MMP_RATE_LIMIT_ENTERPRISE: '1000000',
      // BENCH_GATEWAY_TCP=1: reach the services over loopback TCP instead of in-process dispatch.
      ...(process.env.BENCH_GATEWAY_TCP
        ? {
            MMP_DISCOVERY_AUTH: `http://localhost:${basePorts.auth + offset}`,
            MMP_DISCOVERY_ANALYTICS: `http://localhost:${basePorts.analytics + offset}`,
          }
        : {}),
    },
    stdout: openSync(join(dir, `mmp-${workers}.log`), 'w'),
    stderr: openSync(join(dir, `mmp-${workers}.err`), 'w'),
  })
}

/** SIGTERM, then SIGKILL if it has not ended within 10 s: a failed run must still end. */
async function stopProcess(proc: ReturnType<typeof Bun.spawn> | null, signal: NodeJS.Signals) {
  if (!proc) return
  proc.kill(signal)
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
  await proc.exited
  clearTimeout(timer)
}

async function stopMmp() {
  await stopProcess(mmp, 'SIGTERM')
  mmp = null
}

mkdirSync(join(dir, 'nginx', 'logs'), { recursive: true })
writeFileSync(
  join(dir, 'nginx', 'nginx.conf'),
  `worker_processes 1;
error_log ${dir}/nginx/logs/error.log warn;
pid ${dir}/nginx/nginx.pid;
user root;
events { worker_connections 4096; }
http {
  access_log ${dir}/nginx/logs/access.log combined buffer=64k;
  keepalive_requests 1000000;
  client_body_temp_path ${dir}/nginx/body;
  proxy_temp_path ${dir}/nginx/proxy;
  fastcgi_temp_path ${dir}/nginx/fastcgi;
  uwsgi_temp_path ${dir}/nginx/uwsgi;
  scgi_temp_path ${dir}/nginx/scgi;
  upstream auth { server 127.0.0.1:${basePorts.auth + offset}; keepalive 64; }
  upstream analytics { server 127.0.0.1:${basePorts.analytics + offset}; keepalive 64; }
  server {
    listen 127.0.0.1:${nginxPort};
    location /api/v1/analytics/ {
      proxy_pass http://analytics;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Request-ID $request_id;
    }
    location / {
      proxy_pass http://auth;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Request-ID $request_id;
    }
  }
}
`,
)
const nginx = Bun.spawn(
  [NGINX, '-p', join(dir, 'nginx'), '-c', join(dir, 'nginx', 'nginx.conf'), '-g', 'daemon off;'],
  { stdout: 'inherit', stderr: 'inherit' },
)

async function cleanup() {
  // A graceful quit waits on keep-alive connections; a run that failed midway may hold some.
  await Promise.all([stopMmp(), stopProcess(nginx, 'SIGQUIT')])
  rmSync(dir, { recursive: true, force: true })
}

async function waitFor(url: string) {
  const deadline = Date.now() + 20_000
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return
    } catch {}
    if (mmp?.exitCode !== null || nginx.exitCode !== null || Date.now() > deadline)
      throw new Error(`${url} did not come up (logs in ${dir})`)
    await Bun.sleep(50)
  }
}

interface Run {
  rps: number
  p50: number
  p99: number
}

const unit = (v: string, u: string) => Number(v) * ({ us: 0.001, ms: 1, s: 1000 }[u] ?? 1)

function wrk(url: string, token: string, connections: number, duration: number, path: string): Run {
  const out = Bun.spawnSync([
    WRK!,
    '-t1',
    `-c${connections}`,
    `-d${duration}s`,
    '--latency',
    '-H',
    `Authorization: Bearer ${token}`,
    `${url}${path}`,
  ])
  const text = out.stdout.toString()
  if (/Non-2xx or 3xx responses/.test(text) || /Socket errors/.test(text))
    throw new Error(`wrk against ${url} saw errors:\n${text}`)
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1])
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(text)
    if (!m) throw new Error(`no ${p}% in wrk output:\n${text}`)
    return unit(m[1]!, m[2]!)
  }
  return { rps, p50: pct('50'), p99: pct('99') }
}

async function call(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = (await res.json().catch(() => null)) as any
  if (res.status >= 300 && res.status !== 409)
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

async function login(email: string, pass: string): Promise<string> {
  const body = (await call(gateway, '', 'POST', '/api/v1/auth/login', {
    email,
    password: pass,
  })) as {
    access_token: string
  }
  return body.access_token
}

/** A Pro tenant with a year of demo transactions, read back until analytics holds all of them. */
async function seedTenant(operator: string): Promise<string> {
  const tenant = 'bench-co'
  const ownerPassword = 'bench-co-Owner-Passphrase-42'
  await call(gateway, operator, 'POST', '/api/v1/tenants', {
    id: tenant,
    name: 'Bench Co',
    plan: 'pro',
    admin_email: `owner@${tenant}.test`,
    admin_password: ownerPassword,
  })
  const rows = generateDemo({
    days: sized(365, 7),
    seed: 1,
    end: new Date().toISOString().slice(0, 10),
  })
  for (let i = 0; i < rows.length; i += 1000)
    await call(gateway, operator, 'POST', '/api/v1/parser/transactions', {
      tenant_id: tenant,
      demo: true,
      transactions: rows.slice(i, i + 1000),
    })
  const token = await login(`owner@${tenant}.test`, ownerPassword)
  const deadline = Date.now() + 60_000
  for (;;) {
    const s = await call(gateway, token, 'GET', '/api/v1/analytics/summary')
    if (s.total_transactions === rows.length) break
    if (Date.now() > deadline)
      throw new Error(`analytics holds ${s.total_transactions} of ${rows.length} rows`)
    await Bun.sleep(200)
  }
  console.log(`tenant ${tenant}: ${rows.length} transactions over ${sized(365, 7)} days`)
  return token
}

interface Route {
  name: string
  path: string
  direct: string
  token: string
}

const median = (runs: Run[], key: keyof Run) => {
  const v = runs.map((x) => x[key]).sort((a, b) => a - b)
  return v[Math.floor(v.length / 2)]!
}
const fmt = (n: number) => n.toFixed(3)

async function benchRoute(route: Route): Promise<number> {
  const targets = { direct: route.direct, gateway, nginx: proxied }
  if (!SMOKE) for (const url of Object.values(targets)) wrk(url, route.token, 16, 1, route.path) // warm up
  // Latency on one connection (no queueing in the server): what a request pays per hop. The
  // three targets' requests take turns one by one, so the box's noise falls on all of them alike.
  const lat = await interleavedLatency(
    targets,
    route.path,
    { authorization: `Bearer ${route.token}` },
    SAMPLES,
  )
  // Throughput at 16 and 64 connections: rounds interleave the targets so a noisy neighbour
  // hurts all of them alike; each figure is the median over rounds.
  const names = Object.keys(targets)
  const runs = Object.fromEntries(names.map((n) => [n, { c16: [] as Run[], c64: [] as Run[] }]))
  for (let r = 0; r < rounds; r++) {
    for (const [name, url] of Object.entries(targets)) {
      runs[name]!.c16.push(
        wrk(url, route.token, 16, Math.max(sized(2, 1), Math.round(seconds * 0.6)), route.path),
      )
      runs[name]!.c64.push(wrk(url, route.token, 64, seconds, route.path))
    }
  }
  const of = (name: string, kind: 'c16' | 'c64', key: keyof Run) => median(runs[name]![kind], key)
  const at = (name: string, p: number) => percentile(lat[name]!, p)
  console.log(`\n${route.name} route: GET ${route.path}`)
  console.log('target   p50 ms @1c   p99 ms @1c  rps @16 conns  rps @64 conns  p99 ms @64')
  for (const name of names)
    console.log(
      `${name.padEnd(8)} ${fmt(at(name, 50)).padStart(12)} ${fmt(at(name, 99)).padStart(13)} ${of(name, 'c16', 'rps').toFixed(0).padStart(14)} ${of(name, 'c64', 'rps').toFixed(0).padStart(14)} ${fmt(of(name, 'c64', 'p99')).padStart(11)}`,
    )
  const limit = route.name === 'real' ? 0.3 : 1
  const added = at('gateway', 99) - at('direct', 99)
  const nginxAdded = at('nginx', 99) - at('direct', 99)
  console.log(
    `${route.name} gateway p99 added latency @1c: ${fmt(added)} ms | target ≤ ${limit} ms ${added <= limit ? '✓' : '✗'} | reference nginx added ${fmt(nginxAdded)} ms | p50 added ${fmt(at('gateway', 50) - at('direct', 50))} ms (nginx ${fmt(at('nginx', 50) - at('direct', 50))}) | ${SAMPLES} requests each, interleaved`,
  )
  for (const kind of ['c16', 'c64'] as const) {
    const g = of('gateway', kind, 'rps')
    const n = of('nginx', kind, 'rps')
    console.log(
      `${route.name} gateway throughput @${kind.slice(1)} conns: ${g.toFixed(0)} rps | target ≥ 0.6 × nginx ${g / n >= 0.6 ? '✓' : '✗'} | reference nginx ${n.toFixed(0)} rps | ratio ${(g / n).toFixed(2)}× | direct ${of('direct', kind, 'rps').toFixed(0)} rps`,
    )
  }
  return of('gateway', 'c64', 'rps')
}

/** One platform: up, seeded, both routes measured; the real route's gateway rps at 64. */
async function measure(workers: number, label: string): Promise<number | null> {
  startMmp(workers)
  try {
    await Promise.all([
      waitFor(`${gateway}/health`),
      waitFor(`${directAuth}/health`),
      waitFor(`${directAnalytics}/health`),
    ])
    await waitFor(`${proxied}/health`)
    const operator = await login('bench@mmp.test', password)
    if (!operator) throw new Error('operator login failed')
    const only = process.env.BENCH_ROUTES
    console.log(
      `\nmode: ${label}, gateway ${process.env.BENCH_GATEWAY_TCP ? 'over loopback TCP' : 'dispatching in-process'} | ${rounds} rounds, median`,
    )
    let real: number | null = null
    if (!only || only === 'real') {
      const token = await seedTenant(operator)
      real = await benchRoute({
        name: 'real',
        path: '/api/v1/analytics/summary',
        direct: directAnalytics,
        token,
      })
    }
    if (!only || only === 'light')
      await benchRoute({
        name: 'light',
        path: '/api/v1/auth/me',
        direct: directAuth,
        token: operator,
      })
    return real
  } finally {
    await stopMmp()
  }
}

try {
  const many = Number(process.env.BENCH_WORKERS ?? 0)
  const cores = availableParallelism()
  const count = many > 0 ? many : cores
  const withWorkers = await measure(
    many,
    `mmp serve --workers ${many} (${count} workers on ${cores} cores)`,
  )
  const single = await measure(1, 'mmp serve --workers 1')
  if (withWorkers !== null && single !== null && count > 1)
    console.log(
      `\nreal route, ${count} workers vs 1 @64 conns: ${withWorkers.toFixed(0)} vs ${single.toFixed(0)} rps | ratio ${(withWorkers / single).toFixed(2)}× | target ≥ 1.5× ${withWorkers / single >= 1.5 ? '✓' : '✗'}`,
    )
} finally {
  await cleanup()
}
