/**
 * Time from `mmp serve` to every port healthy, and idle RSS of the whole platform, against a bare
 * Bun HTTP server process started the same way (the reference).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { report } from './support.ts'

const root = join(import.meta.dir, '..')
const ports = [9000, 8000, 8001, 8002, 8003, 8005, 8007, 8008, 8009, 8010, 8099]

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
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

async function startOnce(dataDir: string, offset: number): Promise<{ ms: number; rss: number }> {
  const t0 = performance.now()
  const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), 'serve'], {
    env: {
      ...process.env,
      MMP_DATA_DIR: dataDir,
      MMP_PORT_OFFSET: String(offset),
      MMP_LOG_LEVEL: 'warn',
      MMP_OPERATOR_PASSWORD: 'bench-password',
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  await waitHealthy(
    ports.map((p) => `http://127.0.0.1:${p + offset}/health`),
    proc,
  )
  const ms = performance.now() - t0
  await Bun.sleep(1000)
  const rss = rssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
  return { ms, rss }
}

async function reference(offset: number): Promise<{ ms: number; rss: number }> {
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
  await Bun.sleep(1000)
  const rss = rssMb(proc.pid)
  proc.kill('SIGTERM')
  await proc.exited
  return { ms, rss }
}

const offset = 23000
const dataDir = mkdtempSync(join(tmpdir(), 'mmp-bench-startup-'))
try {
  const first = await startOnce(dataDir, offset)
  const warm = await startOnce(dataDir, offset)
  const ref = await reference(offset)
  report({
    name: 'startup, empty data dir (init included)',
    value: first.ms,
    unit: 'ms',
    target: '< 1000 ms',
    ok: first.ms < 1000,
    reference: { name: 'bare Bun.serve', value: ref.ms },
  })
  report({
    name: 'startup, existing data dir',
    value: warm.ms,
    unit: 'ms',
    target: '< 1000 ms',
    ok: warm.ms < 1000,
    reference: { name: 'bare Bun.serve', value: ref.ms },
  })
  report({
    name: 'idle RSS of the whole platform',
    value: warm.rss,
    unit: 'MB',
    target: '< 200 MB',
    ok: warm.rss < 200,
    reference: { name: 'bare Bun.serve', value: ref.rss },
  })
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
