import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { createSimulator } from '../services/simulator/index.ts'
import { type EmbeddedBroker, startBroker } from './broker.ts'
import type { Config } from './config.ts'
import { initDataDir, loadSecrets } from './secrets.ts'
import { logStarted, type Platform, startLogging, type WorkerRole } from './serve.ts'
import { version } from './version.ts'

/** How many workers `mmp serve` runs: the setting, or one per core when it is 0. */
export function workerCount(config: Config): number {
  const set = config.get<number>('workers')
  return set > 0 ? set : Math.max(1, availableParallelism())
}

/** Set in a worker's environment by its supervisor: its index and how many there are. */
export function workerRole(env = process.env): WorkerRole | undefined {
  const index = env.MMP_WORKER_INDEX
  if (index === undefined) return undefined
  return { index: Number(index), count: Math.max(1, Number(env.MMP_WORKERS ?? 1)) }
}

/**
 * `mmp serve --workers N` (N > 1): this process runs what holds state in memory once (the
 * embedded broker, the M-Pesa simulator) and N workers that each run the gateway and the services
 * on the same ports (SO_REUSEPORT: the kernel spreads connections over them). One worker at a time
 * holds the background lease (daemon/lease.ts). A worker that dies is started again; a worker
 * whose supervisor died stops by itself.
 */
export async function superviseWorkers(config: Config, count: number): Promise<Platform> {
  const { log, format } = startLogging(config)
  await initDataDir(config)
  const secrets = loadSecrets(config)
  const wants = (p: string) => config.only.includes(p as never)
  let broker: EmbeddedBroker | null = null
  if (!config.get<string | null>('mqtt.url') && wants('broker'))
    broker = await startBroker({
      host: '127.0.0.1',
      port: config.ports.broker,
      username: secrets.mqttUsername,
      password: secrets.mqttPassword,
      log,
    })

  const workers: Array<Subprocess | null> = new Array(count).fill(null)
  let stopping = false
  const spawnWorker = (index: number, failures = 0): Promise<void> =>
    new Promise((ready) => {
      const started = Date.now()
      const proc = Bun.spawn(workerCommand(), {
        env: { ...process.env, MMP_WORKER_INDEX: String(index), MMP_WORKERS: String(count) },
        stdin: 'ignore',
        stdout: 'inherit',
        stderr: 'inherit',
        serialization: 'json',
        ipc(message) {
          if ((message as { ready?: boolean })?.ready) ready()
        },
      })
      workers[index] = proc
      void proc.exited.then((code) => {
        workers[index] = null
        ready()
        if (stopping) return
        // A worker that keeps failing at once is started again more and more slowly.
        const again = Date.now() - started > 30_000 ? 0 : failures + 1
        const delay = again === 0 ? 0 : Math.min(30_000, 500 * 2 ** (again - 1))
        log.warn('a worker stopped; starting it again', { worker: index, code, retry_ms: delay })
        setTimeout(() => void spawnWorker(index, again), delay)
      })
    })

  // The first worker creates the databases and takes the background work; the others follow it.
  await spawnWorker(0)
  await Promise.all(Array.from({ length: count - 1 }, (_, i) => spawnWorker(i + 1)))

  let simulator: ReturnType<typeof createSimulator> | null = null
  if ((wants('simulator') || wants('payment')) && !config.get('mpesa.base_url')) {
    simulator = createSimulator({
      delayMs: config.get('mpesa.simulator_delay_ms'),
      version,
      consumerKey: config.get('mpesa.consumer_key'),
      consumerSecret: config.get('mpesa.consumer_secret'),
      shortcode: config.get('mpesa.shortcode'),
      passkey: config.get('mpesa.passkey'),
      statePath: join(config.dataDir, 'simulator', 'requests.db'),
    })
    simulator.listen({ port: config.ports.simulator, hostname: '127.0.0.1' })
  }
  const gateway = wants('gateway') ? `http://127.0.0.1:${config.ports.gateway}` : undefined
  logStarted(config, log, gateway, format, count)

  return {
    urls: {},
    async stop() {
      stopping = true
      const running = workers.filter((w): w is Subprocess => w !== null)
      for (const w of running) w.kill('SIGTERM')
      const timer = setTimeout(() => {
        for (const w of running) w.kill('SIGKILL')
      }, 30_000)
      await Promise.all(running.map((w) => w.exited))
      clearTimeout(timer)
      await simulator?.stop()
      await broker?.close()
      log.info('mmp stopped')
    },
  }
}

/** The same `mmp serve` command line this process was started with. */
function workerCommand(): string[] {
  const args = process.argv.slice(1)
  // A compiled mmp names its embedded script first; the binary itself takes the arguments.
  if (args[0]?.startsWith('/$bunfs/')) args.shift()
  return [process.execPath, ...args]
}

/** In a worker: stop when the supervisor is gone, so no orphan keeps the ports. */
export function followSupervisor(onGone: () => void): void {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer)
      onGone()
    }
  }, 250)
  timer.unref?.()
}
