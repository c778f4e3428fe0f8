import { availableParallelism } from 'node:os'
import type { Subprocess } from 'bun'
import type { metrics } from '../services/kernel/metrics.ts'
import type { EmbeddedBroker } from './broker.ts'
import type { Config } from './config.ts'
import type { Platform, WorkerRole } from './platform.ts'
import { PLATFORM_READY, WORKERS_STARTING } from './readiness.ts'
import { initDataDir, loadSecrets } from './secrets.ts'
import type { listenSimulator } from './simulator.ts'
import { logStarted, startLogging, startupSteps } from './startup.ts'

/** How many workers `mmp serve` runs: the setting, or one per core when it is 0. */
export function workerCount(config: Config): number {
  const set = config.get<number>('workers')
  return set > 0 ? set : Math.max(1, availableParallelism())
}

/** Set in a worker's environment by its supervisor: its index and how many there are. */
export function workerRole(env = process.env): WorkerRole | undefined {
  const index = env.MMP_WORKER_INDEX
  if (index === undefined) return undefined
  return {
    index: Number(index),
    count: Math.max(1, Number(env.MMP_WORKERS ?? 1)),
    joining: env.MMP_WORKER_JOINING === '1',
  }
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
  // Started beside the workers, not before them: they serve without it and connect once it
  // answers (daemon/broker-wait.ts). Imported here, so a worker's start never loads it.
  const brokerStarted: Promise<EmbeddedBroker | null> =
    !config.get<string | null>('mqtt.url') && wants('broker')
      ? import('./broker.ts').then(({ startBroker }) =>
          startBroker({
            host: '127.0.0.1',
            port: config.ports.broker,
            username: secrets.mqttUsername,
            password: secrets.mqttPassword,
            log,
          }),
        )
      : Promise.resolve(null)

  const workers: Array<Subprocess | null> = new Array(count).fill(null)
  let stopping = false
  // Set once every worker and the simulator serve; a worker started again after that is told
  // as soon as it is ready itself, so its /health stops answering 503.
  let platformReady = false
  const replies = new Map<string, (data: unknown) => void>()
  let asked = 0
  /** Every live worker's metrics summed (counters, histograms) or their maximum (gauges). */
  const aggregate = async (): Promise<string> => {
    const live = workers.filter((w): w is Subprocess => w !== null)
    const answers = await Promise.all(
      live.map((w) => {
        const id = String(++asked)
        return new Promise<unknown>((resolve) => {
          const timer = setTimeout(() => resolve(null), 2000)
          replies.set(id, (data) => {
            clearTimeout(timer)
            resolve(data)
          })
          w.send({ metrics_request: id })
        }).finally(() => replies.delete(id))
      }),
    )
    const got = answers.filter((a): a is metric[] => Array.isArray(a))
    const { AggregatorRegistry } = await import('prom-client')
    return AggregatorRegistry.aggregate(got).metrics()
  }
  const tellWorkers = (message: Record<string, unknown>) => {
    for (const w of workers) {
      try {
        w?.send(message)
      } catch {} // a worker that just died is told when it is started again and says ready
    }
  }
  const spawnWorker = (index: number, failures = 0): Promise<void> =>
    new Promise((ready) => {
      const started = Date.now()
      const proc = Bun.spawn(workerCommand(), {
        env: {
          ...process.env,
          MMP_WORKER_INDEX: String(index),
          MMP_WORKERS: String(count),
          MMP_WORKER_JOINING: platformReady ? '1' : '0',
        },
        stdin: 'ignore',
        stdout: 'inherit',
        stderr: 'inherit',
        serialization: 'json',
        ipc(message, child) {
          const m = message as WorkerMessage
          if (m?.ready) {
            if (platformReady) child.send({ [PLATFORM_READY]: true })
            ready()
          } else if (m?.collect)
            void aggregate().then((text) => child.send({ collected: m.collect, text }))
          else if (m?.metrics_reply) replies.get(m.metrics_reply)?.(m.data)
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

  // The first worker starts alone (on a new install it creates the databases), and the platform
  // serves once it and the simulator do: on a box with few cores, workers started together share
  // them and each takes as long as all of them. The others join as they are ready: a worker
  // listens only once it can answer in full, and /health says they are still starting. The
  // simulator starts once a worker listens: what it calls back on start reaches payment then.
  let simulator: ReturnType<typeof listenSimulator> = null
  // Imported and built meanwhile, on the other core: the simulator is a whole service this process
  // would load before its first worker could start, and it calls nothing back until it listens.
  const simulatorBuilt = import('./simulator.ts').then((m) => {
    const wanted = m.simulatorWanted(config)
    return { listen: m.listenSimulator, wanted, sim: wanted ? m.simulatorOf(config) : null }
  })
  const steps = startupSteps(log)
  const [, built] = await steps.time('first_worker', () =>
    Promise.all([spawnWorker(0), simulatorBuilt]),
  )
  await steps.time('simulator', () => {
    if (built.sim) simulator = built.listen(config, log, built.wanted === 'implied', built.sim)
  })
  const broker = await steps.time('broker', () => brokerStarted)
  // The workers' /health answer 503 until told; the line below says the same thing.
  platformReady = true
  tellWorkers({ [PLATFORM_READY]: true, [WORKERS_STARTING]: count - 1 })
  const gateway = wants('gateway') ? `http://127.0.0.1:${config.ports.gateway}` : undefined
  logStarted({ config, log, gateway, format, workers: count })
  steps.report('the first worker and the simulator serve')
  let starting = count - 1
  for (let i = 1; i < count; i++)
    void spawnWorker(i).then(() => tellWorkers({ [WORKERS_STARTING]: --starting }))

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

type metric = Awaited<ReturnType<typeof metrics.getMetricsAsJSON>>[number]

/** What workers and their supervisor say to each other over the IPC channel. */
interface WorkerMessage {
  ready?: boolean
  /** A worker's /metrics asks for every worker's metrics, answered as `collected`. */
  collect?: string
  metrics_reply?: string
  data?: unknown
}

/**
 * In a worker: answers the supervisor's requests for this process's metrics, and returns how
 * the gateway's /metrics gets every worker's, summed (a scrape reaches one worker at random).
 */
export function shareMetrics(): () => Promise<string> {
  const waiting = new Map<string, (text: string) => void>()
  let asked = 0
  process.on('message', async (message: unknown) => {
    const m = message as WorkerMessage & {
      metrics_request?: string
      collected?: string
      text?: string
    }
    if (m?.metrics_request) {
      const { metrics } = await import('../services/kernel/metrics.ts')
      process.send?.({ metrics_reply: m.metrics_request, data: await metrics.getMetricsAsJSON() })
    } else if (m?.collected) waiting.get(m.collected)?.(m.text ?? '')
  })
  return () =>
    new Promise<string>((resolve) => {
      const id = String(++asked)
      const timer = setTimeout(() => {
        waiting.delete(id)
        void import('../services/kernel/metrics.ts').then(({ metrics }) =>
          resolve(metrics.metrics()),
        )
      }, 3000)
      waiting.set(id, (text) => {
        clearTimeout(timer)
        waiting.delete(id)
        resolve(text)
      })
      process.send?.({ collect: id })
    })
}

/** The same `mmp serve` command line this process was started with. */
function workerCommand(): string[] {
  const args = process.argv.slice(1)
  // A compiled mmp names its embedded script first; the binary itself takes the arguments.
  if (args[0]?.startsWith('/$bunfs/')) args.shift()
  return [process.execPath, ...args]
}

/**
 * In a worker: die with the supervisor, so no orphan keeps the ports. On Linux the kernel
 * SIGKILLs the worker the moment its parent dies (PR_SET_PDEATHSIG); the parent pid is watched
 * too, every 250 ms, where that call is unavailable or did not fire.
 */
export function followSupervisor(onGone: () => void): void {
  const parent = process.ppid
  if (process.platform === 'linux') dieWithParent()
  // The IPC channel closes the moment the supervisor dies.
  process.once('disconnect', onGone)
  // Watched as well: the kernel ties the death signal to the thread that spawned the worker.
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer)
      onGone()
    }
  }, 250)
  timer.unref?.()
}

function dieWithParent(): boolean {
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
    const u64 = FFIType.u64
    const libc = dlopen('libc.so.6', {
      prctl: { args: [FFIType.i32, u64, u64, u64, u64], returns: FFIType.i32 },
    })
    const PR_SET_PDEATHSIG = 1
    const SIGKILL = 9n
    return libc.symbols.prctl(PR_SET_PDEATHSIG, SIGKILL, 0n, 0n, 0n) === 0
  } catch {
    return false
  }
}
