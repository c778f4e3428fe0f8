import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { pendingRollups } from './pending-rollups.ts'
import { addToRollups } from './rollups.ts'
import type { StoredTransaction } from './stored.ts'
import { toStored } from './stored.ts'

const TABLES = ['daily_summaries', 'daily_totals', 'daily_counterparties', 'counterparties']

function rollupsOf(kit: TestKit, tenantId: string) {
  const db = kit.registry.tenant('analytics', tenantId)
  return TABLES.map((t) =>
    db.sqlite.query(`SELECT * FROM ${t} WHERE tenant_id = ? ORDER BY 1, 2, 3, 4`).all(tenantId),
  )
}

describe('pending rollups', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
  })
  afterAll(() => kit.cleanup())

  /** Adds the rows to tenant `one` one by one and to `batched` as one sum; the rollups agree. */
  const sameAsOneByOne = (rows: readonly StoredTransaction[]) => {
    const one = kit.registry.tenant('analytics', 'one')
    const batched = kit.registry.tenant('analytics', 'batched')
    one.write(() => {
      for (const r of rows) addToRollups(one, r, 1)
    })
    batched.write(() => {
      const pending = pendingRollups(batched)
      for (const r of rows) pending.add({ ...r, tenant_id: 'batched' })
      pending.flush()
    })
    const expected = rollupsOf(kit, 'one').map((rows) =>
      rows.map((r) => ({ ...(r as object), tenant_id: 'batched' })),
    )
    expect(rollupsOf(kit, 'batched')).toEqual(expected)
  }

  it('write the same rollups, names included, as adding each transaction on its own', async () => {
    const zone = timeZone('Africa/Nairobi')
    let seed = 11
    const rnd = (n: number) => {
      seed = (seed * 16_807) % 2_147_483_647
      return seed % n
    }
    // Few parties, names often missing and times out of order, each round earlier than the last
    // on the whole (a stored row later than a whole batch): every case of the name rule.
    const make = (i: number): StoredTransaction =>
      toStored('one', zone, {
        transaction_id: `t${i}`,
        occurred_at: new Date(
          Date.parse('2026-05-01T00:00:00Z') +
            (rnd(4 * 86_400) - Math.floor(i / 1000) * 7200) * 1000,
        )
          .toISOString()
          .replace(/\d\d\.\d{3}Z$/, '00.000Z'),
        amount: rnd(10_000) / 100,
        direction: rnd(2) ? 'in' : 'out',
        counterparty_name: rnd(3) ? `Name ${rnd(4)}` : null,
        counterparty_phone: rnd(4) ? `07000000${rnd(3)}0` : null,
        description: 'x',
        source: 'api',
        user_id: rnd(2) ? 'usr_a' : null,
        category: rnd(3) ? ['Revenue', 'Rent'][rnd(2)] : undefined,
      })
    for (let round = 0; round < 40; round++) {
      sameAsOneByOne(Array.from({ length: 1 + rnd(130) }, (_, i) => make(round * 1000 + i)))
    }
    expect(rollupsOf(kit, 'one')[3]!.length).toBeGreaterThan(3)
  })

  it("name a nameless party, stored later than a whole sum, after the sum's first row", () => {
    const zone = timeZone('Africa/Nairobi')
    const at = (id: string, day: number, name: string | null) =>
      toStored('one', zone, {
        transaction_id: id,
        occurred_at: `2026-07-0${day}T09:00:00.000Z`,
        amount: 10,
        direction: 'in',
        counterparty_name: name,
        counterparty_phone: '0711000111',
        description: 'x',
        source: 'api',
      })
    sameAsOneByOne([at('late', 3, null)])
    // One by one: the first keeps 'First' (coalesce of a null name), the second finds it named.
    sameAsOneByOne([at('first', 1, 'First'), at('second', 2, 'Second')])
    const party = rollupsOf(kit, 'batched')[3]!.find((r: any) => r.key === 'tel:254711000111')
    expect(party).toMatchObject({ name: 'First', tx_count: 3 })
  })
})
