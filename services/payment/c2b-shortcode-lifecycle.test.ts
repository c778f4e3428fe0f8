import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { getShortcode } from './c2b-shortcode-store.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/**
 * A shortcode held by one tenant is refused to another (409) until it is released; a claim the
 * provider refuses puts the row it replaced back as it was; a rotation gives new URLs.
 */
describe('C2B shortcode lifecycle', () => {
  let k: SimulatorKit
  const SHOP = { tenantId: 'shop', role: 'Admin' as const }
  const ACME = { tenantId: 'acme', role: 'Admin' as const }
  const register = (who: typeof SHOP, call = k.call) =>
    call('/api/v1/payments/c2b/register', {
      who,
      body: { shortcode: '600420', response_type: 'Completed' },
    })
  const listed = async (who: typeof SHOP) =>
    (await k.call('/api/v1/payments/c2b/shortcodes', { who })).body.data.map(
      (r: { shortcode: string }) => r.shortcode,
    )

  beforeAll(async () => {
    k = await simulatorKit()
    k.kit.createTenant('acme')
  })
  afterAll(() => k?.cleanup())

  it('holds, releases, restores a refused claim and rotates', async () => {
    const shop = await register(SHOP)
    expect(shop.status).toBe(201)
    expect(await listed(SHOP)).toEqual(['600420'])
    expect((await register(ACME)).status).toBe(409)

    const released = await k.call('/api/v1/payments/c2b/shortcodes/600420', {
      who: SHOP,
      method: 'DELETE',
    })
    expect(released.body).toMatchObject({ status: 'released', tenant_id: 'shop' })
    expect(released.body.released_at).toEqual(expect.any(String))
    expect(await listed(SHOP)).toEqual([])

    // The provider is unreachable for this claim: the released row comes back unchanged.
    const before = getShortcode(k.kit.ctx.registry.platform('payment'), '600420')
    const offline = k.serviceWith({ providerUrl: 'http://127.0.0.1:9' })
    expect((await register(ACME, offline.call)).status).toBe(502)
    expect(getShortcode(k.kit.ctx.registry.platform('payment'), '600420')).toEqual(before!)

    const acme = await register(ACME)
    expect(acme.status).toBe(201)
    expect(await listed(ACME)).toEqual(['600420'])
    const rotated = await k.call('/api/v1/payments/c2b/shortcodes/600420/rotate', {
      who: ACME,
      method: 'POST',
    })
    expect(rotated.status).toBe(200)
    expect(rotated.body.confirmation_url).not.toBe(acme.body.confirmation_url)
  }, 30_000)
})
