import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createAlerts } from './alerts.ts'
import { type PaymentKit, paymentKit } from './test-kit.ts'

/**
 * An alert raised again while in force counts on from its first time; once cleared, raising it
 * again starts a new count and a new first time.
 */
describe('payment alerts', () => {
  let k: PaymentKit
  beforeAll(async () => {
    k = await paymentKit()
  })
  afterAll(() => k.cleanup())

  it('counts repeats while in force and starts again after it cleared', () => {
    const { ctx } = k.kit
    const alerts = createAlerts({
      ctx,
      platform: () => ctx.registry.platform('payment'),
      nowIso: () => ctx.clock.now().toISOString(),
    })
    alerts.raise('provider_setup', 'first')
    const [first] = alerts.list()
    expect(first).toMatchObject({ count: 1, detail: 'first' })
    ctx.clock.advance(60_000)
    alerts.raise('provider_setup', 'second')
    const [second] = alerts.list()
    expect(second).toMatchObject({ count: 2, detail: 'second', first_at: first!.first_at })
    expect(second!.last_at > first!.last_at).toBe(true)

    alerts.clear('provider_setup')
    expect(alerts.list()).toEqual([])

    ctx.clock.advance(60_000)
    alerts.raise('provider_setup', 'again')
    const [again] = alerts.list()
    expect(again).toMatchObject({ count: 1, detail: 'again' })
    expect(again!.first_at).toBe(again!.last_at)
    expect(again!.first_at > second!.last_at).toBe(true)
  })
})
