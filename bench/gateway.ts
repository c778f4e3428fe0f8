/**
 * `bun bench/gateway.ts`: the same authenticated GET (`/api/v1/auth/me`, token verified at the
 * edge and again by the service) direct to the auth service, through the gateway, and through
 * nginx (1 worker) as a plain reverse proxy to the service, measured with wrk in one run.
 * Targets (DESIGN §14): gateway p99 added latency ≤ 1 ms over direct; gateway throughput
 * ≥ 0.6 × nginx's. nginx and wrk are required (Debian packages nginx and wrk).
 */
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const NGINX = '/usr/sbin/nginx'
const WRK = Bun.which('wrk')
if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx`)
if (!WRK) throw new Error('wrk is missing: apt-get install wrk')

const root = join(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'mmp-bench-gateway-'))
const seconds = Number(process.env.BENCH_SECONDS ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const LIGHT = Number(process.env.BENCH_LIGHT_CONNECTIONS ?? 1)

const free = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

async function pickOffset(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const offset = 30000 + 100 * Math.floor(Math.random() * 200)
    const ports = [9000, 8001, 1883, 9001].map((p) => p + offset)
    if ((await Promise.all(ports.map(free))).every(Boolean)) return offset
  }
  throw new Error('no free port range')
}

const offset = await pickOffset()
const gateway = `http://127.0.0.1:${9000 + offset}`
const direct = `http://127.0.0.1:${8001 + offset}`
const nginxPort = 9001 + offset
const proxied = `http://127.0.0.1:${nginxPort}`
const password = 'bench-operator-password'

const mmp = Bun.spawn(
  [process.execPath, join(root, 'cmd/main.ts'), 'serve', '--only', 'gateway,auth,broker'],
  {
    cwd: root,
    env: {
      ...process.env,
      MMP_DATA_DIR: join(dir, 'data'),
      MMP_PORT_OFFSET: String(offset),
      MMP_OPERATOR_EMAIL: 'bench@mmp.test',
      MMP_OPERATOR_PASSWORD: password,
      MMP_LOG_FORMAT: 'json',
      // The bench measures proxying, not the limiter refusing: lift the operator's tier rate.
      MMP_RATE_LIMIT_ENTERPRISE: '1000000',
      // BENCH_GATEWAY_TCP=1: reach auth over loopback TCP instead of in-process dispatch.
      ...(process.env.BENCH_GATEWAY_TCP
        ? { MMP_DISCOVERY_AUTH: `http://localhost:${8001 + offset}` }
        : {}),
    },
    stdout: openSync(join(dir, 'mmp.log'), 'w'),
    stderr: openSync(join(dir, 'mmp.err'), 'w'),
  },
)

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
  client_body_temp_path ${dir}/nginx/body;
  proxy_temp_path ${dir}/nginx/proxy;
  fastcgi_temp_path ${dir}/nginx/fastcgi;
  uwsgi_temp_path ${dir}/nginx/uwsgi;
  scgi_temp_path ${dir}/nginx/scgi;
  upstream auth { server 127.0.0.1:${8001 + offset}; keepalive 64; }
  server {
    listen 127.0.0.1:${nginxPort};
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
  mmp.kill('SIGTERM')
  nginx.kill('SIGQUIT')
  await Promise.all([mmp.exited, nginx.exited])
  rmSync(dir, { recursive: true, force: true })
}

async function waitFor(url: string) {
  const deadline = Date.now() + 20_000
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return
    } catch {}
    if (mmp.exitCode !== null || nginx.exitCode !== null || Date.now() > deadline)
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

function wrk(url: string, token: string, connections: number, duration: number): Run {
  const out = Bun.spawnSync([
    WRK!,
    '-t1',
    `-c${connections}`,
    `-d${duration}s`,
    '--latency',
    '-H',
    `Authorization: Bearer ${token}`,
    `${url}/api/v1/auth/me`,
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

try {
  await Promise.all([waitFor(`${gateway}/health`), waitFor(`${direct}/health`)])
  await waitFor(`${proxied}/health`)
  const login = await fetch(`${gateway}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@mmp.test', password }),
  })
  const token = ((await login.json()) as { access_token: string }).access_token
  if (!token) throw new Error(`login failed: ${login.status}`)

  const targets = { direct, gateway, nginx: proxied }
  for (const url of Object.values(targets)) wrk(url, token, 16, 1) // warm up JIT and pools

  // Rounds interleave the targets so a noisy neighbour hurts all of them alike; each figure is
  // the median over rounds. Latency on one connection (no queueing in the server): what a
  // request pays per hop. Throughput at saturation (64 connections).
  const light: Record<string, Run[]> = { direct: [], gateway: [], nginx: [] }
  const heavy: Record<string, Run[]> = { direct: [], gateway: [], nginx: [] }
  for (let r = 0; r < rounds; r++) {
    for (const [name, url] of Object.entries(targets)) {
      light[name]!.push(wrk(url, token, LIGHT, Math.max(2, Math.round(seconds * 0.6))))
      heavy[name]!.push(wrk(url, token, 64, seconds))
    }
  }
  const median = (runs: Run[], key: keyof Run) => {
    const v = runs.map((x) => x[key]).sort((a, b) => a - b)
    return v[Math.floor(v.length / 2)]!
  }
  const lightOf = (name: string, key: keyof Run) => median(light[name]!, key)
  const heavyOf = (name: string, key: keyof Run) => median(heavy[name]!, key)
  const fmt = (n: number) => n.toFixed(3)
  console.log(
    `mode: gateway ${process.env.BENCH_GATEWAY_TCP ? 'over loopback TCP' : 'dispatching in-process'} | ${rounds} rounds, median`,
  )
  console.log(`target   p50 ms @${LIGHT}c   p99 ms @${LIGHT}c  rps @64 conns  p99 ms @64`)
  for (const name of Object.keys(targets))
    console.log(
      `${name.padEnd(8)} ${fmt(lightOf(name, 'p50')).padStart(12)} ${fmt(lightOf(name, 'p99')).padStart(13)} ${heavyOf(name, 'rps').toFixed(0).padStart(14)} ${fmt(heavyOf(name, 'p99')).padStart(11)}`,
    )
  const added = lightOf('gateway', 'p99') - lightOf('direct', 'p99')
  const nginxAdded = lightOf('nginx', 'p99') - lightOf('direct', 'p99')
  const ratio = heavyOf('gateway', 'rps') / heavyOf('nginx', 'rps')
  console.log(
    `gateway p99 added latency: ${fmt(added)} ms | target ≤ 1 ms ${added <= 1 ? '✓' : '✗'} | reference nginx added ${fmt(nginxAdded)} ms`,
  )
  console.log(
    `gateway throughput: ${heavyOf('gateway', 'rps').toFixed(0)} rps | target ≥ 0.6 × nginx ${ratio >= 0.6 ? '✓' : '✗'} | reference nginx ${heavyOf('nginx', 'rps').toFixed(0)} rps | ratio ${ratio.toFixed(2)}×`,
  )
} finally {
  await cleanup()
}
