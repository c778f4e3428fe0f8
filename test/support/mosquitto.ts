import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'

const candidates = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto']

/** Debian's mosquitto on a loopback port; throws (never skips) when it is not installed. */
export async function startMosquitto(opts: { persistence?: boolean } = {}): Promise<{
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
  const port = 30000 + Math.floor(Math.random() * 5000)
  const conf = join(dir, 'mosquitto.conf')
  // With persistence, as docs/scaling.md configures it: sessions and queued messages survive a
  // restart (saved on a clean stop and every few seconds).
  const persistence = opts.persistence
    ? `persistence true\npersistence_location ${dir}/\nautosave_interval 1\n`
    : 'persistence false\n'
  writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\nallow_anonymous true\n${persistence}sys_interval 1\n`,
  )
  let proc: Subprocess = spawn([bin, '-c', conf], { stdout: 'pipe', stderr: 'pipe' })
  const listening = async () => {
    const deadline = Date.now() + 5000
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = createConnection({ port, host: '127.0.0.1' }, () => {
          s.end()
          resolve(true)
        })
        s.on('error', () => resolve(false))
      })
      if (ok) return
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(`mosquitto did not start (exit ${proc.exitCode})`)
      await Bun.sleep(50)
    }
  }
  await listening()
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
    async restart() {
      proc.kill('SIGTERM')
      await proc.exited
      proc = spawn([bin, '-c', conf], { stdout: 'pipe', stderr: 'pipe' })
      await listening()
    },
  }
}
