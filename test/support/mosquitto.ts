import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'

const candidates = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto']

/** Debian's mosquitto on a loopback port; throws (never skips) when it is not installed. */
export async function startMosquitto(): Promise<{
  url: string
  port: number
  stop(): Promise<void>
}> {
  const bin = candidates.find((c) => existsSync(c))
  if (!bin)
    throw new Error('mosquitto is not installed (apt-get install mosquitto); .ci/run installs it')
  const dir = mkdtempSync(join(tmpdir(), 'mmp-mosquitto-'))
  const port = 30000 + Math.floor(Math.random() * 5000)
  const conf = join(dir, 'mosquitto.conf')
  writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nsys_interval 1\n`,
  )
  const proc: Subprocess = spawn([bin, '-c', conf], { stdout: 'pipe', stderr: 'pipe' })
  const deadline = Date.now() + 5000
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host: '127.0.0.1' }, () => {
        s.end()
        resolve(true)
      })
      s.on('error', () => resolve(false))
    })
    if (ok) break
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`mosquitto did not start (exit ${proc.exitCode})`)
    await Bun.sleep(50)
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
