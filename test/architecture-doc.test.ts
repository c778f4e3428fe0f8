import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { topics } from '../schema/events.ts'
import { topicRegistry } from '../schema/topic-registry.ts'
import {
  architecturePath,
  readSources,
  regenerate,
  registryDrift,
  requestPath,
} from '../scripts/architecture-doc.ts'
import { createAsyncApi } from '../services/gateway/asyncapi.ts'
import { subscribe } from '../services/kernel/subscribe.ts'

/**
 * ARCHITECTURE.md's generated sections, schema/topic-registry.ts and the code agree: the topic
 * table, the parts table and a request's path are what `bun scripts/architecture-doc.ts` writes,
 * and the registry names exactly who publishes (`emitEvent`) and consumes (`subscribe`) each topic.
 */
describe('ARCHITECTURE.md', () => {
  const doc = readFileSync(architecturePath, 'utf8')

  it('is what `bun scripts/architecture-doc.ts` writes from the code', () => {
    const stale = doc !== regenerate(doc)
    expect(
      stale ? 'stale: run `bun scripts/architecture-doc.ts` and commit ARCHITECTURE.md' : 'fresh',
    ).toBe('fresh')
  })

  it('stays within 200 lines', () => {
    expect(doc.split('\n').length).toBeLessThanOrEqual(200)
  })

  it('names every topic with its publishers and consumers', () => {
    for (const [topic, roles] of Object.entries(topicRegistry)) {
      // Cells are padded to their column's width, as Biome formats a Markdown table.
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${topic}\` `))
      expect(row?.split('|')[2]?.trim()).toBe(roles.publishers.join(', '))
    }
  })

  it('changes when the registry changes, so the freshness check can fail', () => {
    const changed = {
      ...topicRegistry,
      [topics.balanceLow]: { publishers: ['cashflow'], consumers: ['webhook', 'billing'] },
    }
    expect(regenerate(doc, changed)).not.toBe(regenerate(doc))
    expect(regenerate(doc, changed)).toContain('billing (services/billing)')
  })
})

describe('schema/topic-registry.ts', () => {
  const sources = readSources()

  it('declares exactly the publishers and consumers the code has', () => {
    expect(registryDrift(sources)).toEqual([])
  })

  it('finds a publication or a subscription the registry lacks', () => {
    const more = new Map(sources)
    more.set(
      'services/parser/extra.ts',
      "emitEvent(db, { topic: topics.balanceLow, tenantId, data }, clock)\nawait subscribe(ctx, 'parser', topics.usage, h)",
    )
    expect(registryDrift(more)).toEqual([
      'mobilemoney.balance.low: published by cashflow, parser in the code, by cashflow in the registry',
      'services/parser: consumes mobilemoney.transactions.success, mobilemoney.usage in the code, mobilemoney.transactions.success in the registry',
    ])
  })

  it('finds a consumer the registry declares that no longer subscribes', () => {
    const fewer = new Map(sources)
    fewer.set('daemon/revocations.ts', '')
    expect(registryDrift(fewer)).toEqual([
      'daemon/revocations.ts: consumes nobody in the code, mobilemoney.auth.revoked in the registry',
    ])
  })

  it('stops the request path when a link of it is not in the registry', () => {
    const broken = {
      ...topicRegistry,
      [topics.transactionsCategorized]: { publishers: ['analytics'], consumers: ['webhook'] },
    }
    const via = [topics.transactionsSuccess, topics.transactionsCategorized]
    expect(() =>
      requestPath('POST', '/api/v1/payments/stkpush', ['payments'], via, broken),
    ).toThrow('mobilemoney.transactions.categorized is not published by')
    expect(() => requestPath('POST', '/api/v1/payments/stkpush', ['payment_rows'], via)).toThrow(
      'schema/payment/tables.ts has no payment_rows',
    )
  })

  it('gives the AsyncAPI channels their publishers and consumers', () => {
    const channels = createAsyncApi('0.0.0').channels as Record<
      string,
      { address: string; description: string }
    >
    for (const channel of Object.values(channels)) {
      const roles = topicRegistry[channel.address as keyof typeof topicRegistry]
      expect(channel.description).toStartWith(
        `Published by ${roles.publishers.join(', ')}; consumed by ${roles.consumers.join(', ')};`,
      )
    }
    expect(Object.keys(channels)).toHaveLength(Object.keys(topicRegistry).length)
  })

  it('lets only a declared consumer subscribe (checked by tsc)', () => {
    const bus = { subscribe: async () => {} } as never
    const log = { warn: () => {} } as never
    // @ts-expect-error analytics is not declared a consumer of balance.low
    const wrong = () => subscribe({ bus, log }, 'analytics', topics.balanceLow, () => {})
    const right = () => subscribe({ bus, log }, 'analytics', topics.transactionsRaw, () => {})
    expect(typeof wrong).toBe('function')
    expect(typeof right).toBe('function')
  })
})
