import { timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { Aedes } from 'aedes'
import type { Logger } from '../services/kernel/log.ts'

export interface EmbeddedBroker {
  url: string
  close(): Promise<void>
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * The embedded MQTT broker (aedes), bound to loopback, username and password required
 * (DESIGN §1). It is transport only: sessions live in memory, durability is the outbox's job.
 */
export async function startBroker(opts: {
  host: string
  port: number
  username: string
  password: string
  log: Logger
}): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker()
  broker.authenticate = (_client, username, password, done) => {
    const ok =
      username !== undefined &&
      same(username, opts.username) &&
      !!password &&
      same(password.toString(), opts.password)
    done(null, ok)
  }
  const server: Server = createServer(broker.handle)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, opts.host, () => resolve())
  })
  opts.log.info('embedded MQTT broker listening', { address: `${opts.host}:${opts.port}` })
  return {
    url: `mqtt://${opts.host}:${opts.port}`,
    async close() {
      await new Promise<void>((resolve) => broker.close(() => resolve()))
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
