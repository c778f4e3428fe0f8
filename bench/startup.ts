/**
 * Time from `mmp serve` to every port healthy, and idle RSS of the whole platform, against a bare
 * Bun HTTP server process started the same way in the same run (the reference: what the box
 * gives any Bun process right now). The warm starts are on a data dir holding tenants and recent
 * events in their outboxes, as after a crash under load: the outbox replay and the rollups
 * catching up run after the ports are up, so they are timed apart ("until warmed up").
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { report, SMOKE, sized } from './support.ts'

const root = join(import.meta.dir, '..')
const ports = [9000, 8000, 8001, 8002, 8003, 8005, 8007, 8008, 8009, 8010, 8099]
const PASSWORD = 'bench-password'

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The resident memory of a process and its children (a supervisor and its workers). */
function treeRssMb(pid: number): number {
  let total = rssMb(pid)
  try {
    for (const t of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/))
      if (t) total += treeRssMb(Number(t))
  } catch {}
  return total
}

async function waitHealthy(urls: string[], proc: { exitCode: number | null }): Promise<void> {
  for (const url of urls) {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`process exited with ${proc.exitCode}`)
      try {
        if ((await fetch(url)).ok) break
      } catch {}
      await Bun.sleep(5)
    }
  }
}

/** Until the gateway's /health names nothing warming up any more. */
async function waitWarmedUp(url: string): Promise<void> {
  const end = Date.now() + 120_000
  while (Date.now() < end) {
    const body = (await (await fetch(url)).json().catch(() => ({}))) as { warming?: unknown }
    if (body.warming === undefined) return
    await Bun.sleep(10)
  }
  throw new Error('still warming up after 120 s')
}

interface Started {
  ms: number
  warmMs: number
  rss: number
}

async function startOnce(
  dataDir: string,
  offset: number,
  workers: string,
  seed?: (gateway: string) => Promise<void>,
): Promise<Started> {
  const t0 = performance.now()
  const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), 'serve'], {
    env: {
      ...process.env,
      MMP_DATA_DIR: dataDir,
      MMP_PORT_OFFSET: String(offset),
      MMP_LOG_LEVEL: 'warn',
      MMP_OPERATOR_PASSWORD: PASSWORD,
      MMP_WORKERS: workers,
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const gateway = `http://127.0.0.1:${9000 + offset}`
  await waitHealthy(
    ports.map((p) => `http://127.0.0.1:${p + offset}/health`),
    proc,
  )
  const ms = performance.now() - t0
  await waitWarmedUp(`${gateway}/health`)
  const warmMs = performance.now() - t0
  await seed?.(gateway)
  await Bun.sleep(SMOKE ? 100 : 1000)
  const rss = treeRssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
  return { ms, warmMs, rss }
}

/** Tenants with transactions: every import leaves events in the outboxes. */
async function seedData(gateway: string): Promise<void> {
  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(`${gateway}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as Record<string, unknown>
  }
  const login = await post('/api/v1/auth/login', {
    email: 'operator@mmp.local',
    password: PASSWORD,
  })
  const token = String(login.access_token)
  const tenants = sized(10, 2)
  const rows = sized(2000, 20)
  for (let t = 0; t < tenants; t++) {
    const id = `bench-${t}`
    await post(
      '/api/v1/tenants',
      { id, name: id, plan: t % 2 ? 'pro' : 'free', admin_email: `owner@${id}.test` },
      token,
    )
    const transactions = Array.from({ length: rows }, (_, i) => ({
      occurred_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      amount: 100 + (i % 50),
      direction: i % 3 ? 'in' : 'out',
      description: `Payment ${i}`,
      receipt_number: `B${t}X${i}`.toUpperCase(),
    }))
    await post('/api/v1/parser/transactions', { tenant_id: id, transactions }, token)
  }
}

async function reference(offset: number): Promise<Started> {
  const t0 = performance.now()
  const proc = Bun.spawn(
    [
      process.execPath,
      '-e',
      `Bun.serve({ port: ${9000 + offset}, fetch: () => new Response('ok') })`,
    ],
    { stdout: 'ignore' },
  )
  await waitHealthy([`http://127.0.0.1:${9000 + offset}/`], proc)
  const ms = performance.now() - t0
  await Bun.sleep(SMOKE ? 100 : 1000)
  const rss = rssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
  return { ms, warmMs: ms, rss }
}

const offset = 23000
const dataDir = mkdtempSync(join(tmpdir(), 'mmp-bench-startup-'))
try {
  const ref = await reference(offset)
  const first = await startOnce(dataDir, offset, '0', seedData)
  // `mmp serve` as installed: one worker per core (0), and one process for comparison.
  const warm = await startOnce(dataDir, offset, '0')
  const single = await startOnce(dataDir, offset, '1')
  const vs = { name: 'bare Bun.serve', value: ref.ms }
  const lines: Array<[string, number]> = [
    ['startup, empty data dir (init included)', first.ms],
    ['startup, existing data dir, default workers', warm.ms],
    ['startup, existing data dir, one process', single.ms],
  ]
  for (const [name, value] of lines)
    report({ name, value, unit: 'ms', target: '< 1000 ms', ok: value < 1000, reference: vs })
  report({
    name: 'until warmed up (outbox replay, rollups), default workers',
    value: warm.warmMs,
    unit: 'ms',
    reference: vs,
  })
  report({
    name: 'idle RSS of the whole platform, default workers',
    value: warm.rss,
    unit: 'MB',
    target: '< 200 MB per worker',
    ok: warm.rss < 200 * 3,
    reference: { name: 'bare Bun.serve', value: ref.rss },
  })
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
