import { describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import {
  assertTenantHere,
  createOwnership,
  ownerOf,
  tenantOfCall,
  weightOf,
} from './tenant-owner.ts'

const tenantId = fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}$/)
const instanceList = fc.uniqueArray(
  fc.tuple(fc.ipV4(), fc.integer({ min: 1024, max: 65535 })).map(([h, p]) => `http://${h}:${p}`),
  { minLength: 2, maxLength: 8, selector: (u) => u },
)

describe('rendezvous owner of a tenant', () => {
  it('weighs with xxHash64 as published (its test vectors), so every process agrees', () => {
    expect(Bun.hash.xxHash64('', 0n)).toBe(0xef46db3751d8e999n)
    expect(Bun.hash.xxHash64('abc')).toBe(0x44bc2cf5ad770999n)
    expect(weightOf('http://a', 'kiosk')).toBe(Bun.hash.xxHash64('http://a\nkiosk'))
  })

  it('is one of the instances, the same on every call and whatever the list order', () => {
    const listAndShuffled = instanceList.chain((list) =>
      fc.tuple(
        fc.constant(list),
        fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length }),
      ),
    )
    fc.assert(
      fc.property(tenantId, listAndShuffled, (t, [list, shuffled]) => {
        fc.pre(t !== 'platform')
        const owner = ownerOf(t, list)
        expect(list).toContain(owner)
        expect(ownerOf(t, list)).toBe(owner)
        expect(ownerOf(t, shuffled)).toBe(owner)
      }),
    )
  })

  it('moves only the removed instance’s tenants when one is removed', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(tenantId, { minLength: 1, maxLength: 50 }),
        instanceList,
        (ts, list) => {
          const gone = list[0]!
          const rest = list.slice(1)
          for (const t of ts) {
            const before = ownerOf(t, list)
            const after = ownerOf(t, rest)
            if (before !== gone) expect(after).toBe(before)
            else expect(rest).toContain(after)
          }
        },
      ),
    )
  })

  it('moves only the tenants the new instance wins when one is added', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(tenantId, { minLength: 1, maxLength: 50 }),
        instanceList,
        (ts, list) => {
          const added = 'http://10.255.255.254:8000'
          for (const t of ts) {
            const after = ownerOf(t, [...list, added])
            if (after !== added) expect(after).toBe(ownerOf(t, list))
          }
        },
      ),
    )
  })

  it('spreads tenants about evenly over the instances', () => {
    fc.assert(
      fc.property(instanceList, (list) => {
        const counts = new Map(list.map((u) => [u, 0]))
        const n = 4000
        for (let i = 0; i < n; i++) {
          const owner = ownerOf(`tenant-${i}`, list)
          counts.set(owner, counts.get(owner)! + 1)
        }
        const fair = n / list.length
        for (const c of counts.values()) {
          expect(c).toBeGreaterThan(fair * 0.75)
          expect(c).toBeLessThan(fair * 1.25)
        }
      }),
      { numRuns: 30 },
    )
  })

  it('gives the platform tenant and requests naming no tenant to the first instance', () => {
    fc.assert(
      fc.property(instanceList, (list) => {
        expect(ownerOf('platform', list)).toBe(list[0]!)
        expect(ownerOf(undefined, list)).toBe(list[0]!)
      }),
    )
    expect(ownerOf('kiosk', ['http://only'])).toBe('http://only')
    expect(() => ownerOf('kiosk', [])).toThrow('no instance')
  })
})

describe('ownership of one instance', () => {
  it('owns exactly the tenants the hash gives it, and every instance together owns each once', () => {
    fc.assert(
      fc.property(tenantId, instanceList, (t, list) => {
        const owners = list.filter((self) => createOwnership(list, self).owns(t))
        expect(owners).toEqual([ownerOf(t, list)])
      }),
    )
  })

  it('owns everything alone, and refuses to start when it is not in a list of several', () => {
    expect(createOwnership(['http://a'], 'http://b').owns('kiosk')).toBe(true)
    expect(createOwnership([], 'http://b').owns('kiosk')).toBe(true)
    expect(() => createOwnership(['http://a', 'http://c'], 'http://b')).toThrow(
      'MMP_INSTANCE_<SERVICE>',
    )
  })

  it('answers 421 TENANT_ELSEWHERE for a tenant another instance owns', () => {
    const list = ['http://a', 'http://b']
    const t = 'kiosk'
    const mine = createOwnership(list, ownerOf(t, list))
    const other = createOwnership(list, list.find((u) => u !== ownerOf(t, list))!)
    expect(() => assertTenantHere(mine, t)).not.toThrow()
    expect(() => assertTenantHere(undefined, t)).not.toThrow()
    try {
      assertTenantHere(other, t)
      throw new Error('not refused')
    } catch (err) {
      expect(err).toMatchObject({ code: 'TENANT_ELSEWHERE', status: 421, extra: { tenant_id: t } })
    }
  })

  it('takes the tenant a call names before the caller’s own', () => {
    expect(tenantOfCall('platform', [{ tenant_id: 'kiosk' }, {}, undefined])).toBe('kiosk')
    expect(tenantOfCall('platform', [undefined, { from: 'x' }, { tenant_id: 'duka' }])).toBe('duka')
    expect(tenantOfCall('kiosk', [undefined, null, { tenant_id: 7 }])).toBe('kiosk')
  })

  it('follows a tenant moved to another instance while that instance is listed', () => {
    const list = ['http://a', 'http://b', 'http://c']
    const t = 'kiosk'
    const hashed = ownerOf(t, list)
    const elsewhere = list.find((u) => u !== hashed)!
    expect(ownerOf(t, list, elsewhere)).toBe(elsewhere)
    // A placement naming an instance that is gone falls back to the hash.
    expect(ownerOf(t, list, 'http://gone')).toBe(hashed)
    const placed = (id: string) => (id === t ? elsewhere : undefined)
    expect(createOwnership(list, elsewhere, placed).owns(t)).toBe(true)
    expect(createOwnership(list, hashed, placed).owns(t)).toBe(false)
    // Other tenants keep their hashed owner.
    expect(createOwnership(list, ownerOf('duka', list), placed).owns('duka')).toBe(true)
  })
})
