import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import { basePorts as ports } from '../../daemon/config.ts'
import { trackChild } from './children.ts'

const root = join(import.meta.dir, '..', '..')
export const OPERATOR = { email: 'operator@mmp.test', password: 'operator-test-password' }

/** The ports a platform listens on, before `MMP_PORT_OFFSET` (the daemon's own table). */
const basePorts: Record<string, number> = ports

export interface TestPlatform {
  offset: number
  dataDir: string
  gateway: string
  /** Base URL of one part (service, simulator) on this platform. */
  url(part: string): string
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string
  /** SIGTERM and wait; resolves to the exit code. */
  stop(): Promise<number>
  /** SIGKILL and wait. */
  kill(): Promise<void>
  /** Start again on the same data dir and ports (after stop or kill). */
  restart(env?: Record<string, string>): Promise<void>
  /** Stop and delete the data dir. */
  dispose(): Promise<void>
  /** Log in through the gateway; returns the access token. */
  login(email?: string, password?: string): Promise<string>
  /** The process id of the running `mmp serve` (for /proc/<pid>/fd). */
  pid(): number | undefined
  /** Resolves when the process ends (a fault point killed it); to its signal or exit code. */
  exited(): Promise<string | number>
}

export interface PlatformOptions {
  env?: Record<string, string>
  only?: string
  dataDir?: string
  offset?: number
  /** Start under this open-files limit (`ulimit -n`). */
  openFiles?: number
  /** A command the server is started through, e.g. `['fiu-run', '-x', '-c', '...']`. */
  wrap?: string[]
  /** The address its parts are reached at (its own network namespace); 127.0.0.1 by default. */
  host?: string
  /**
   * Resolve once the process is spawned instead of once every part answers `/health` (a test of
   * start-up itself polls on its own).
   */
  noWait?: boolean
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}

export async function pickOffset(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const offset = 20000 + 200 * Math.floor(Math.random() * 150)
    const checks = await Promise.all(Object.values(basePorts).map((p) => portFree(p + offset)))
    if (checks.every(Boolean)) return offset
  }
  throw new Error('no free port range for a test platform')
}

/**
 * Starts `mmp serve` as a child process on an offset port in a temp data dir and waits until
 * every part it runs answers `/health`.
 *
 * @example
 * const p = await startTestPlatform()
 * const token = await p.login()
 * await p.dispose()
 */
export async function startTestPlatform(opts: PlatformOptions = {}): Promise<TestPlatform> {
  // Another process may take a port between the check and the listen: try a fresh range.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts)
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|in use/.test(String(err))) throw err
    }
  }
}

async function startOnce(opts: PlatformOptions = {}): Promise<TestPlatform> {
  const offset = opts.offset ?? (await pickOffset())
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'mmp-e2e-'))
  let out = ''
  let proc: Subprocess | null = null
  const parts = (opts.only ?? Object.keys(basePorts).join(',')).split(',')
  const url = (part: string) => `http://${opts.host ?? '127.0.0.1'}:${basePorts[part]! + offset}`

  const launch = async (extraEnv: Record<string, string> = {}) => {
    const limit = opts.openFiles
      ? ['sh', '-c', `ulimit -n ${opts.openFiles} && exec "$@"`, 'sh']
      : []
    proc = spawn(
      [
        ...(opts.wrap ?? []),
        ...limit,
        process.execPath,
        join(root, 'cmd/main.ts'),
        'serve',
        ...(opts.only ? ['--only', opts.only] : []),
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_PORT_OFFSET: String(offset),
          MMP_DATA_DIR: dataDir,
          MMP_OPERATOR_EMAIL: OPERATOR.email,
          MMP_OPERATOR_PASSWORD: OPERATOR.password,
          MMP_LOG_FORMAT: 'json',
          MMP_SIMULATOR_DELAY_MS: '50',
          MMP_WEBHOOK_ALLOW_INSECURE: '1',
          MMP_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,400ms',
          // Tests drive many requests from one address; the rate-limit tests set their own.
          MMP_RATE_LIMIT_FREE: '100000',
          MMP_RATE_LIMIT_PRO: '100000',
          MMP_RATE_LIMIT_ENTERPRISE: '100000',
          MMP_RATE_LIMIT_IP: '100000',
          // One process unless the run asks for workers (`MMP_WORKERS=2 npm test`).
          MMP_WORKERS: process.env.MMP_WORKERS ?? '1',
          ...(opts.env ?? {}),
          ...extraEnv,
        },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    trackChild(proc, 'mmp serve')
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      const dec = new TextDecoder()
      for await (const chunk of stream) out += dec.decode(chunk)
    }
    void pump(proc.stdout as ReadableStream<Uint8Array>)
    void pump(proc.stderr as ReadableStream<Uint8Array>)
    if (opts.noWait) return
    // Generous: on a busy CI box with two CPU hogs beside it, a whole platform once took over 20 s.
    const deadline = Date.now() + 45_000
    const healthParts = parts.filter(
      (p) => p !== 'broker' && !(p === 'simulator' && opts.env?.MMP_MPESA_BASE_URL),
    )
    for (const part of healthParts) {
      for (;;) {
        if (proc.exitCode !== null)
          throw new Error(`mmp serve exited with ${proc.exitCode}:\n${out}`)
        try {
          const res = await fetch(`${url(part)}/health`)
          if (res.ok) break
        } catch {}
        if (Date.now() > deadline) throw new Error(`${part} did not become healthy:\n${out}`)
        await Bun.sleep(50)
      }
    }
  }

  await launch()
  const platform: TestPlatform = {
    offset,
    dataDir,
    gateway: url('gateway'),
    url,
    logs: () => out,
    async stop() {
      if (!proc || proc.exitCode !== null) return proc?.exitCode ?? 0
      proc.kill('SIGTERM')
      return await proc.exited
    },
    async kill() {
      if (!proc || proc.exitCode !== null) return
      proc.kill('SIGKILL')
      await proc.exited
    },
    async restart(env) {
      await launch(env)
    },
    async dispose() {
      await platform.kill()
      rmSync(dataDir, { recursive: true, force: true })
    },
    async login(email = OPERATOR.email, password = OPERATOR.password) {
      const res = await fetch(`${url('gateway')}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      })
      const body = (await res.json()) as { access_token?: string }
      if (!res.ok || !body.access_token)
        throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`)
      return body.access_token
    },
    pid: () => (proc as Subprocess | null)?.pid,
    async exited() {
      const running = proc as Subprocess | null
      if (!running) return 0
      const code = await running.exited
      return running.signalCode ?? code
    },
  }
  return platform
}

/** The one polling helper of the tests (services/kernel/testing.ts), for waiting on events. */
export { eventually } from '../../services/kernel/testing.ts'
/** The one JSON client of the tests (test/support/client.ts), re-exported for the e2e tests. */
export { api, onExchange, type RecordedExchange } from './client.ts'
