import { defineCommand } from 'citty'
import { startPlatform } from '../daemon/serve.ts'
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
  },
  async run({ args }) {
    const config = configFromArgs(args, {
      only: args.only,
      portOffset: args['port-offset'] !== undefined ? Number(args['port-offset']) : undefined,
    })
    // Handlers go in before anything listens, so a signal during start-up still shuts down cleanly.
    let stopping = false
    let started: ReturnType<typeof startPlatform> | null = null
    const shutdown = async () => {
      if (stopping) return
      stopping = true
      const platform = await started
      await platform?.stop()
      process.exit(0)
    }
    process.on('SIGTERM', shutdown)
    process.on('SIGINT', shutdown)
    started = startPlatform(config)
    await started
  },
})
