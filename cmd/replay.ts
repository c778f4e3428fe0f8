import { defineCommand } from 'citty'
import { consola } from 'consola'
import { loadSecrets } from '../daemon/secrets.ts'
import { topics } from '../schema/events.ts'
import { createLogger, createMqttBus, republish, serviceNames } from '../services/kernel/index.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { openRegistry } from './registry.ts'
import { configArgs, configFromArgs, jsonArg, printJson, requireDataDir } from './shared.ts'

const webhooks = defineCommand({
  meta: {
    name: 'webhooks',
    description: 'Queue dead webhook deliveries again (through the running platform)',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...jsonArg,
    dead: { type: 'boolean', description: 'replay deliveries in the dead-letter state' },
    endpoint: { type: 'string', description: 'only this endpoint (whe_…)' },
    tenant: { type: 'string', description: 'only this tenant (default: every tenant)' },
  },
  async run({ args }) {
    if (!args.dead) fail('name what to replay: --dead')
    const config = configFromArgs(args)
    const api = await operatorApi(config, args.url)
    const res = await api.call<{ replayed: number }>('POST', '/api/v1/webhooks/deliveries/replay', {
      status: 'dead',
      ...(args.tenant ? { tenant_id: args.tenant } : {}),
      ...(args.endpoint ? { endpoint_id: args.endpoint } : {}),
    })
    if (args.json) return printJson(res)
    consola.success(
      `${res.replayed} dead ${res.replayed === 1 ? 'delivery' : 'deliveries'} queued again`,
    )
  },
})

/** `5m`, `2h`, `1d` before now, or an ISO date-time. */
function sinceOf(value: string): string {
  const rel = /^(\d+)(s|m|h|d)$/.exec(value.trim())
  if (rel) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's']
    return new Date(Date.now() - Number(rel[1]) * unit).toISOString()
  }
  const at = Date.parse(value)
  if (Number.isNaN(at)) fail(`--since: '${value}' is neither a date-time nor like 30m, 2h, 1d`)
  return new Date(at).toISOString()
}

const events = defineCommand({
  meta: {
    name: 'events',
    description:
      'Republish events of a topic from every outbox in the data dir (consumers drop repeats)',
  },
  args: {
    ...configArgs,
    ...jsonArg,
    topic: { type: 'string', required: true, description: 'e.g. mobilemoney.transactions.success' },
    since: { type: 'string', required: true, description: 'ISO date-time or 30m, 2h, 1d ago' },
  },
  async run({ args }) {
    const config = configFromArgs(args)
    requireDataDir(config)
    const known: readonly string[] = Object.values(topics)
    if (!known.includes(args.topic))
      fail(`--topic: no topic ${args.topic}; the topics are ${known.join(', ')}`)
    const since = sinceOf(args.since)
    const secrets = loadSecrets(config)
    const log = createLogger('replay')
    const bus = await createMqttBus({
      url: config.get<string | null>('mqtt.url') ?? `mqtt://127.0.0.1:${config.ports.broker}`,
      username: secrets.mqttUsername,
      password: secrets.mqttPassword,
      clientId: `mmp-replay-${process.pid}`,
      log,
    }).catch(() => fail('the broker is not reachable; is `mmp serve` running?'))
    const registry = openRegistry(config)
    let count = 0
    try {
      for (const name of serviceNames)
        count += await republish({ registry, bus, name }, { since, topics: [args.topic] })
    } finally {
      registry.closeAll()
      await bus.close()
    }
    if (args.json) return printJson({ topic: args.topic, since, republished: count })
    consola.success(`${count} event(s) of ${args.topic} since ${since} republished`)
  },
})

export default defineCommand({
  meta: { name: 'replay', description: 'Replay dead webhook deliveries or broker events' },
  subCommands: { webhooks, events },
})
