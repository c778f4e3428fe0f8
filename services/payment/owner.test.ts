import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eventually } from '../kernel/testing.ts'
import type { Daraja } from './daraja.ts'
import { ownerOf, ownerState, SELF_OWNER } from './owner.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import { type PaymentKit, paymentKit } from './test-kit.ts'

/** A process that ran and ended: its owner string, taken while it was alive. */
async function deadOwner(): Promise<string> {
  const child = Bun.spawn(['sleep', '30'])
  const owner = ownerOf(child.pid)!
  expect(ownerState(owner)).toBe('alive')
  child.kill('SIGKILL')
  await child.exited
  return owner
}

describe('the owner of an in-flight provider call', () => {
  it('tells a live process from one that ended, and cannot tell another machine', async () => {
    expect(SELF_OWNER).not.toBeNull()
    expect(ownerState(SELF_OWNER)).toBe('alive')
    expect(ownerState(await deadOwner())).toBe('dead')
    expect(ownerState(`another-boot:${process.pid}:1`)).toBe('unknown')
    expect(ownerState(null)).toBe('unknown')
  })
})

describe('a sibling worker and a key whose first request died with its worker', () => {
  let k: PaymentKit
  const hung: Array<() => void> = []
  const provider: Daraja = {
    stkPush: async () => {
      await new Promise<void>((resolve) => hung.push(resolve))
      throw new Error('the worker died before this answer')
    },
    stkQuery: async () => ({ state: 'processing' }),
    b2c: async () => {
      throw new Error('not used')
    },
  }

  beforeAll(async () => {
    k = await paymentKit()
  })
  afterAll(() => {
    for (const r of hung.splice(0)) r()
    k.cleanup()
  })

  it('answers at once with the payment instead of 409 IDEMPOTENCY_IN_PROGRESS for the call budget', async () => {
    // Two workers of one platform: each only knows its own calls, and age alone would say wait.
    const ctx = { ...k.kit.ctx, workers: 2 }
    const first = createPaymentsApp(ctx, createPayments(ctx, { provider }))
    const sibling = createPaymentsApp(ctx, createPayments(ctx, { provider }))
    const auth = {
      ...(await k.jsonAs({ tenantId: 'acme', role: 'Manager', userId: 'usr_ann' })),
      'idempotency-key': 'k-worker-died',
    }
    const push = (app: typeof first) =>
      app.handle(
        new Request('http://payment.test/api/v1/payments/stkpush', {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({
            phone_number: '254712300001',
            amount: 10,
            account_reference: 'INV-1',
            transaction_desc: 'Order',
          }),
        }),
      )
    void push(first).catch(() => {})
    await eventually(() => hung.length > 0, 10_000, 'the first push to reach the provider')
    // While its owner lives, the sibling is told to come back.
    expect((await push(sibling)).status).toBe(409)
    // The first worker dies mid-call: its row names a process that is gone.
    const db = k.kit.ctx.registry.tenant('payment', 'acme')
    const owner = await deadOwner()
    db.write(() =>
      db.sqlite.query("UPDATE payments SET owner = ? WHERE status = 'initiating'").run(owner),
    )
    const taken = await push(sibling)
    expect(taken.status).toBe(202)
    expect(await taken.json()).toMatchObject({ status: 'unknown' })
  })
})
