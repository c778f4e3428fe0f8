import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EventBus, SessionListener } from '../services/kernel/bus.ts'
import { createHop } from '../services/kernel/hop.ts'
import { createServiceClient, staticDiscovery } from '../services/kernel/http-client.ts'
import { createLogger } from '../services/kernel/log.ts'
import { eventually } from '../services/kernel/testing.ts'
import { keepSessions } from './sessions.ts'

const log = createLogger('test')
log.level = -999
const hop = createHop('session-test-key')

/** A broker connection as the keeper sees it: told of each connection, by hand. */
function fakeBus() {
  const listeners: SessionListener[] = []
  return {
    connect(present: boolean, topics: string[]) {
      for (const fn of listeners) fn(present, topics)
    },
    bus: {
      publish: async () => {},
      subscribe: async () => {},
      onSession: (fn: SessionListener) => listeners.push(fn),
      isConnected() {
        return true
      },
      close: async () => {},
    } satisfies EventBus,
  }
}

/** A part in another process: a real HTTP server answering the replay route, or failing it. */
function part(answer: () => Response) {
  const asked: Array<{ body: unknown; trusted: boolean }> = []
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      asked.push({
        body: await req.json(),
        trusted: hop.trusted(req.headers, 'x-mmp-purpose') === 'platform-sync',
      })
      return answer()
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, asked, stop: () => server.stop(true) }
}

describe('keepSessions', () => {
  const cleanups: Array<() => void> = []
  afterEach(() => {
    for (const c of cleanups.splice(0)) c()
  })
  const setup = (parts: { parser?: string; analytics?: string }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mmp-sessions-'))
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const discovery = staticDiscovery({
      ...(parts.parser ? { parser: [parts.parser] } : {}),
      ...(parts.analytics ? { analytics: [parts.analytics] } : {}),
    })
    const client = createServiceClient(discovery, 2000, hop)
    const make = () => {
      const k = keepSessions({ dataDir, discovery, client, local: ['analytics'], log })
      cleanups.push(() => k.stop())
      return k
    }
    const mark = () =>
      JSON.parse(readFileSync(join(dataDir, 'broker-sessions', 'mmp-billing-1.json'), 'utf8'))
    return { make, mark }
  }

  it('asks nothing on the first connection ever, and marks it', () => {
    const parser = part(() => Response.json({ republished: 0 }))
    cleanups.push(parser.stop)
    const { make, mark } = setup({ parser: parser.url })
    const b = fakeBus()
    make().keep(b.bus, 'mmp-billing-1')
    b.connect(false, ['mobilemoney.usage'])
    expect(parser.asked).toEqual([])
    expect(typeof mark().seen_at).toBe('string')
  })

  it('owes nothing when every part runs in this process (one mmp serve)', () => {
    const analytics = part(() => Response.json({ republished: 0 }))
    cleanups.push(analytics.stop)
    const { make, mark } = setup({ analytics: analytics.url })
    const first = fakeBus()
    make().keep(first.bus, 'mmp-billing-1')
    first.connect(false, ['mobilemoney.usage'])
    const again = fakeBus()
    make().keep(again.bus, 'mmp-billing-1')
    again.connect(false, ['mobilemoney.usage'])
    expect(analytics.asked).toEqual([])
    expect(mark().owed_since).toBeUndefined()
  })

  it('asks the parts of other processes for its topics since the mark when the broker lost it', async () => {
    const parser = part(() => Response.json({ republished: 3 }))
    const analytics = part(() => Response.json({ republished: 0 }))
    cleanups.push(parser.stop, analytics.stop)
    const { make, mark } = setup({ parser: parser.url, analytics: analytics.url })
    const first = fakeBus()
    make().keep(first.bus, 'mmp-billing-1')
    first.connect(false, ['mobilemoney.usage'])

    const again = fakeBus()
    make().keep(again.bus, 'mmp-billing-1')
    again.connect(true, ['mobilemoney.usage'])
    expect(parser.asked).toEqual([]) // the broker kept the session: nothing to ask
    const seen = mark().seen_at as string
    again.connect(false, ['mobilemoney.usage'])
    await eventually(() => parser.asked.length === 1, 3000, 'parser asked')
    const body = parser.asked[0]!.body as { since: string; topics: string[] }
    expect(body.topics).toEqual(['mobilemoney.usage'])
    // Back past the mark by the margin for clocks of other hosts.
    expect(Date.parse(seen) - Date.parse(body.since)).toBe(60_000)
    expect(parser.asked[0]!.trusted).toBe(true)
    // A part of this process replays on its own; it is not asked.
    expect(analytics.asked).toEqual([])
    await eventually(() => mark().owed_since === undefined, 3000, 'the replay settled')
  })

  it('remembers a replay it still owes, and asks again at the next start', async () => {
    let up = false
    const parser = part(() =>
      up ? Response.json({ republished: 1 }) : new Response('down', { status: 503 }),
    )
    cleanups.push(parser.stop)
    const { make, mark } = setup({ parser: parser.url })
    const first = fakeBus()
    make().keep(first.bus, 'mmp-billing-1')
    first.connect(false, ['mobilemoney.usage'])

    const crashed = fakeBus()
    const keeper = make()
    keeper.keep(crashed.bus, 'mmp-billing-1')
    crashed.connect(false, ['mobilemoney.usage'])
    await eventually(() => parser.asked.length > 0, 3000, 'parser asked')
    const owed = mark().owed_since as string
    expect(typeof owed).toBe('string')
    keeper.stop() // the process ends before the parser answered

    // The next start finds its session (the broker kept the new one), and still asks.
    up = true
    const next = fakeBus()
    make().keep(next.bus, 'mmp-billing-1')
    next.connect(true, ['mobilemoney.usage'])
    await eventually(() => mark().owed_since === undefined, 5000, 'the owed replay answered')
    const last = parser.asked.at(-1)!.body as { since: string }
    expect(Date.parse(last.since)).toBeLessThanOrEqual(Date.parse(owed))
  })
})
