import { createServer } from 'node:net'
import { defineCommand } from 'citty'
import type { Config, Part } from '../daemon/config.ts'
import { startPlatform } from '../daemon/serve.ts'
import {
  followSupervisor,
  shareMetrics,
  superviseWorkers,
  workerCount,
  workerRole,
} from '../daemon/workers.ts'
import { fail } from './client.ts'
import { configArgs, configFromArgs } from './shared.ts'

export default defineCommand({
  meta: {
    name: 'serve',
    description: 'Run the gateway, the services, the broker and the simulator',
  },
  args: {
    ...configArgs,
    only: { type: 'string', description: 'comma-separated parts to run, e.g. payment,webhook' },
    'port-offset': { type: 'string', description: 'added to every port' },
    workers: {
      type: 'string',
      description: 'processes sharing the ports (default 1; 0: one per core)',
    },
  },
  async run({ args }) {
    const config = configFromArgs(args, {
      only: args.only,
      portOffset: args['port-offset'] !== undefined ? Number(args['port-offset']) : undefined,
      workers: args.workers,
    })
    // A worker shares the ports its supervisor checked; it only starts its part.
    const worker = workerRole()
    if (worker) {
      // A supervisor that is gone died hard (a graceful stop stops its workers first): so does this.
      followSupervisor(() => process.kill(process.pid, 'SIGKILL'))
      worker.ready = () => process.send?.({ ready: true })
      worker.metrics = shareMetrics()
    }
    const count = worker ? 1 : workerCount(config)
    const taken = worker ? null : await firstTakenPort(config, 1500)
    if (taken)
      fail(
        `port ${taken.port} (${taken.part}) is in use: another mmp or another program holds it; stop it, or move every port with --port-offset N (MMP_PORT_OFFSET)`,
      )
    // Handlers go in before anything listens, so a signal during start-up still shuts down cleanly.
    let stopping = false
    let started: ReturnType<typeof startPlatform> | null = null
    const shutdown = async () => {
      if (stopping) return
      stopping = true
      const platform = await started?.catch(() => null)
      await platform?.stop()
      process.exit(0)
    }
    process.on('SIGTERM', shutdown)
    process.on('SIGINT', shutdown)
    started = count > 1 ? superviseWorkers(config, count) : startPlatform(config, worker)
    await started.catch((err: Error) => fail(`mmp serve could not start: ${err?.message ?? err}`))
  },
})

/** The parts this process listens for, with the address each binds. */
function listeners(config: Config): Array<{ part: Part; host: string }> {
  return config.only
    .filter((p) => !(p === 'broker' && config.get('mqtt.url')))
    .filter((p) => !(p === 'simulator' && config.get('mpesa.base_url')))
    .map((part) => ({
      part,
      host:
        part === 'gateway'
          ? config.gatewayHost
          : part === 'broker' || part === 'simulator'
            ? '127.0.0.1'
            : config.host,
    }))
}

/**
 * Checked before anything starts, so a taken port is one line and not a half-started platform.
 * A port still held is looked at again for `waitMs`: the workers of a platform that just crashed
 * are still being torn down by the kernel.
 */
async function firstTakenPort(config: Config, waitMs: number) {
  const until = Date.now() + waitMs
  for (;;) {
    const taken = await takenPort(config)
    if (!taken || Date.now() >= until) return taken
    await Bun.sleep(100)
  }
}

async function takenPort(config: Config) {
  for (const { part, host } of listeners(config)) {
    const port = config.ports[part]
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer()
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'EADDRINUSE'))
      s.listen(port, host, () => s.close(() => resolve(true)))
    })
    if (!free) return { part, port }
  }
  return null
}
