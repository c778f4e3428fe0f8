import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * The deployment files of docs/deploy, checked by their own tools: `caddy validate`, `nginx -t`
 * (and nginx actually proxying a platform), `systemd-analyze verify`, and the Prometheus scrape
 * configuration (`promtool check config` where Prometheus is installed, its shape otherwise).
 */
const root = join(import.meta.dir, '..')
const deploy = join(root, 'docs', 'deploy')
const has = (tool: string) => Bun.which(tool) !== null || existsSync(`/usr/sbin/${tool}`)
/**
 * Runs a tool to its end, or kills it after `seconds`. `out` says how it ended and what it
 * printed, so a failed expectation on it shows why; `stdout` is its output alone.
 */
const run = async (cmd: string[], env: Record<string, string> = {}, seconds = 20) => {
  const child = Bun.spawn(cmd, {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: seconds * 1000,
    killSignal: 'SIGKILL',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const killed = child.signalCode === 'SIGKILL' ? `\n(killed after ${seconds} s)` : ''
  return { code, stdout, out: `${cmd[0]} exited ${code}: ${stdout}${stderr}${killed}` }
}
/** A port nothing listens on now: the kernel's pick for a listener that closes at once. */
const freePort = () => {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

describe('deployment files', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-deploy-'))
  let p: TestPlatform

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,broker' })
  }, 30_000)

  afterAll(async () => {
    await p?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('Caddyfile passes caddy validate', async () => {
    // Debian 12 packages caddy (scripts/test-peers.sh installs it).
    expect(has('caddy')).toBe(true)
    const r = await run(
      ['caddy', 'validate', '--adapter', 'caddyfile', '--config', join(deploy, 'Caddyfile')],
      { HOME: scratch, XDG_DATA_HOME: scratch, XDG_CONFIG_HOME: scratch },
    )
    expect(r.out).toContain('Valid configuration')
    expect(r.code).toBe(0)
  }, 30_000)

  /** nginx.conf with a throwaway certificate and ports of this test. */
  const nginxConf = async (https: number, http: number) => {
    const cert = join(scratch, 'cert.pem')
    const key = join(scratch, 'key.pem')
    if (!existsSync(cert)) {
      const r = await run([
        'openssl',
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=mmp.example.com',
        '-keyout',
        key,
        '-out',
        cert,
      ])
      expect(r.out).toContain('openssl exited 0')
    }
    const text = readFileSync(join(deploy, 'nginx.conf'), 'utf8')
      .replace('/etc/letsencrypt/live/mmp.example.com/fullchain.pem', cert)
      .replace('/etc/letsencrypt/live/mmp.example.com/privkey.pem', key)
      .replace(/^pid .*$/m, `pid ${join(scratch, 'nginx.pid')};`)
      .replace('server 127.0.0.1:9000;', `server 127.0.0.1:${9000 + p.offset};`)
      .replaceAll('listen 443 ssl http2;', `listen ${https} ssl http2;`)
      .replaceAll('listen 80;', `listen ${http};`)
      .replace(/^\s*listen \[::\].*$/gm, '')
    const file = join(scratch, 'nginx.conf')
    writeFileSync(file, text)
    return file
  }

  it('nginx.conf passes nginx -t and proxies the gateway, hiding /metrics', async () => {
    expect(has('nginx')).toBe(true)
    const https = freePort()
    const file = await nginxConf(https, freePort())
    const check = await run(['nginx', '-t', '-e', 'stderr', '-p', scratch, '-c', file])
    expect(check.out).toContain('test is successful')
    expect(check.code).toBe(0)
    const nginx = Bun.spawn(
      ['nginx', '-e', 'stderr', '-p', scratch, '-c', file, '-g', 'daemon off;'],
      { stdout: 'ignore', stderr: 'pipe' },
    )
    const said = new Response(nginx.stderr).text()
    try {
      let health: { status: number; body: string } | null = null
      for (let i = 0; i < 100 && !health && nginx.exitCode === null; i++) {
        const r = await run([
          'curl',
          '-sk',
          '-w',
          '\\n%{http_code}',
          `https://127.0.0.1:${https}/health`,
        ])
        if (r.code === 0) {
          const lines = r.stdout.trimEnd().split('\n')
          health = { status: Number(lines.pop()), body: lines.join('\n') }
        } else await Bun.sleep(50)
      }
      if (health?.status !== 200) {
        nginx.kill('SIGQUIT')
        throw new Error(`nginx answered ${JSON.stringify(health)}; it said: ${await said}`)
      }
      expect(JSON.parse(health.body)).toMatchObject({ service: 'gateway' })
      const metrics = await run([
        'curl',
        '-sk',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        `https://127.0.0.1:${https}/metrics`,
      ])
      expect(metrics.out).toBe('curl exited 0: 404')
      // The same path straight at the gateway, from this host, is the scrape target.
      expect((await fetch(`${p.gateway}/metrics`)).status).toBe(200)
    } finally {
      nginx.kill('SIGQUIT')
      await nginx.exited
    }
  }, 30_000)

  it('mmp.service passes systemd-analyze verify', async () => {
    if (!has('systemd-analyze')) {
      console.warn('systemd-analyze is not installed here: mmp.service not checked')
      return
    }
    // verify wants ExecStart to exist: point it at a stand-in executable.
    const bin = join(scratch, 'mmp')
    writeFileSync(bin, '#!/bin/sh\n')
    chmodSync(bin, 0o755)
    const unit = join(scratch, 'mmp.service')
    writeFileSync(
      unit,
      readFileSync(join(deploy, 'mmp.service'), 'utf8').replace('/usr/local/bin/mmp', bin),
    )
    const r = await run(['systemd-analyze', 'verify', unit])
    expect(r.out.trim()).toBe('systemd-analyze exited 0:')
  })

  it('prometheus.yml scrapes the gateway /metrics on this host', async () => {
    const file = join(deploy, 'prometheus.yml')
    if (has('promtool')) {
      const r = await run(['promtool', 'check', 'config', file])
      expect(r.out).toContain('promtool exited 0')
    }
    const config = Bun.YAML.parse(readFileSync(file, 'utf8')) as any
    expect(config.scrape_configs).toEqual([
      expect.objectContaining({
        job_name: 'mmp',
        metrics_path: '/metrics',
        static_configs: [expect.objectContaining({ targets: ['127.0.0.1:9000'] })],
      }),
    ])
  })
})
