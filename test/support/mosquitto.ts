import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import mqtt from 'mqtt'
import { trackChild } from './children.ts'

const candidates = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto']

/** Debian's mosquitto on a port of its own; throws (never skips) when it is not installed. */
export async function startMosquitto(
  opts: {
    persistence?: boolean
    /** The address it listens on (a bridge's, for parts in their own network namespaces). */
    host?: string
  } = {},
): Promise<{
  url: string
  port: number
  stop(): Promise<void>
  /** SIGTERM (it saves its persistence file) and start again on the same port and file. */
  restart(): Promise<void>
}> {
  const bin = candidates.find((c) => existsSync(c))
  if (!bin)
    throw new Error('mosquitto is not installed (apt-get install mosquitto); .ci/run installs it')
  const dir = mkdtempSync(join(tmpdir(), 'mmp-mosquitto-'))
  // Started as root, mosquitto drops to its own user, which must be able to write its
  // persistence file here (else it logs the failure and keeps nothing across a restart).
  chmodSync(dir, 0o777)
  const conf = join(dir, 'mosquitto.conf')
  // As docs/scaling.md configures it. With persistence, sessions and queued messages survive a
  // restart (saved on a clean stop and every few seconds). The queue per client is raised from
  // Mosquitto's default of 1,000, past which it drops QoS 1 messages for a consumer that lags.
  const persistence = opts.persistence
    ? `persistence true\npersistence_location ${dir}/\nautosave_interval 1\n`
    : 'persistence false\n'
  const host = opts.host ?? '127.0.0.1'
  let port = 0
  let proc: Subprocess | null = null
  const launch = () => {
    proc = spawn([bin, '-c', conf], { stdout: 'pipe', stderr: 'pipe' })
    trackChild(proc, 'mosquitto')
    return proc
  }
  /**
   * Whether this mosquitto answers on the port: an MQTT handshake, not a TCP connect, since
   * another program (an HTTP server of a test platform) may hold the port it failed to bind.
   */
  const listening = async (): Promise<boolean> => {
    const running = proc!
    const deadline = Date.now() + 5000
    for (;;) {
      const ok = await mqtt
        .connectAsync(`mqtt://${host}:${port}`, { reconnectPeriod: 0, connectTimeout: 1000 })
        .then(
          (c) => c.endAsync().then(() => true),
          () => false,
        )
      if (ok && running.exitCode === null) return true
      // It exits at once when another process holds the port.
      if (running.exitCode !== null) return false
      if (Date.now() > deadline) throw new Error('mosquitto did not start listening')
      await Bun.sleep(50)
    }
  }
  for (let attempt = 1; ; attempt++) {
    port = await freePort(host)
    writeFileSync(
      conf,
      `listener ${port} ${host}\nallow_anonymous true\n${persistence}max_queued_messages 100000\nsys_interval 1\n`,
    )
    launch()
    if (await listening()) break
    if (attempt >= 5) throw new Error(`mosquitto did not start (exit ${proc!.exitCode})`)
  }
  return {
    url: `mqtt://${host}:${port}`,
    port,
    async stop() {
      proc!.kill('SIGTERM')
      await proc!.exited
      rmSync(dir, { recursive: true, force: true })
    },
    async restart() {
      proc!.kill('SIGTERM')
      await proc!.exited
      launch()
      if (!(await listening())) throw new Error(`mosquitto did not start again on ${port}`)
    },
  }
}

/** A port the kernel just gave out as free on `host` (a random pick may be a test platform's). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
