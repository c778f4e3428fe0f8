import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { budgetMs, referenceMs, timed } from './support/timing.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

/**
 * Issue 14: a process killed between the provider accepting a request and the platform recording
 * its answer must never let a retry with the same Idempotency-Key start a second real payment.
 * Each case crashes at one fault point, restarts on the same data dir without the fault, retries
 * with the same key, and checks that the money moved exactly once everywhere it is counted.
 */
const SECRET = `whsec_${Buffer.from('crash-test-signing-secret-0123').toString('base64')}`

const cases = [
  {
    fault: 'payment.after_provider_accepted',
    kind: 'stk',
    tenant: 'crash-a',
    phone: '254711110011',
  },
  { fault: 'payment.after_settle_commit', kind: 'stk', tenant: 'crash-b', phone: '254711110022' },
  { fault: 'b2c.after_provider_accepted', kind: 'b2c', tenant: 'crash-c', phone: '254711110033' },
] as const

describe('a payment whose process dies at a fault point', () => {
  let p: TestPlatform
  const receiver = startWebhookReceiver(SECRET)
  const admins = new Map<string, ReturnType<typeof api>>()

  beforeAll(async () => {
    p = await startTestPlatform()
    const operator = api(p.gateway, await p.login())
    for (const c of cases) {
      const created = await operator.post('/api/v1/tenants', {
        id: c.tenant,
        name: `Crash ${c.tenant}`,
        plan: 'pro',
        admin_email: `owner@${c.tenant}.test`,
        admin_password: 'crash-password-1',
      })
      expect(created.status).toBe(201)
      const admin = api(p.gateway, await p.login(`owner@${c.tenant}.test`, 'crash-password-1'))
      const hook = await admin.post('/api/v1/webhooks', {
        tenant_id: c.tenant,
        url: `${receiver.url}/${c.tenant}`,
        events: ['payment.success'],
        secret: SECRET,
      })
      expect(hook.status).toBe(201)
      admins.set(c.tenant, admin)
    }
  }, 60_000)

  afterAll(async () => {
    receiver.stop()
    await p?.dispose()
  })

  /** The request the test retries; the same body every time, with the same key. */
  const send = (c: (typeof cases)[number], key: string) => {
    const admin = admins.get(c.tenant)!
    return c.kind === 'stk'
      ? admin.post(
          '/api/v1/payments/stkpush',
          {
            tenant_id: c.tenant,
            phone_number: c.phone,
            amount: 150,
            account_reference: 'CRASH-1',
            transaction_desc: 'Crash test',
          },
          { 'idempotency-key': key },
        )
      : admin.post(
          '/api/v1/payments/b2c',
          { tenant_id: c.tenant, phone_number: c.phone, amount: 150, remarks: 'Crash refund' },
          { 'idempotency-key': key },
        )
  }

  const gatewayDown = async () => {
    try {
      await fetch(`${p.gateway}/health`, { signal: AbortSignal.timeout(1000) })
      return false
    } catch {
      return true
    }
  }

  for (const c of cases) {
    it(`settles a ${c.kind} payment exactly once after a crash at ${c.fault} and a retry with its key`, async () => {
      const key = `crash-${c.fault}`
      const admin = admins.get(c.tenant)!
      await p.kill()
      await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: c.fault })

      // The first attempt: the process dies at the fault point (during it or just after it).
      await send(c, key).catch(() => null)
      await eventually(gatewayDown, 15_000, `the process to die at ${c.fault}`)
      expect(p.logs()).toContain(`fault point ${c.fault} reached`)
      await p.kill()
      await p.restart({ MMP_FAULT: '' })

      // The retry answers at once: the payment's state, or "still in progress"; never a new payment.
      // At once: within a few times a request that waits on nothing, timed now on this machine
      // (the provider's timeout, what a retry that waited would take, is far longer).
      const reference = await referenceMs(() => fetch(`${p.gateway}/health`).then((r) => r.text()))
      const { value: retry, ms } = await timed(() => send(c, key))
      expect(ms).toBeLessThan(budgetMs({ floor: 3000, reference, factor: 50 }))
      expect([202, 409]).toContain(retry.status)
      if (retry.status === 409) {
        expect(retry.body).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS' })
        expect(Number(retry.headers.get('retry-after'))).toBeGreaterThan(0)
      }
      const answer = await eventually(
        async () => {
          const r = await send(c, key)
          return r.status === 202 ? r.body : null
        },
        10_000,
        'a 202 for the retried key',
      )
      const statusPath =
        c.kind === 'stk'
          ? `/api/v1/payments/status/${answer.checkout_request_id}`
          : `/api/v1/payments/b2c/${answer.id}`
      const final = await eventually(
        async () => {
          const s = await admin.get(statusPath)
          return s.status === 200 && s.body.status === 'success' ? s.body : null
        },
        20_000,
        `the ${c.kind} payment to end in success`,
      )
      expect(final).toMatchObject({ status: 'success', amount: 150, phone_number: c.phone })

      // The provider received exactly one request for this key.
      const received = await api(p.url('simulator')).get(`/simulator/received?phone=${c.phone}`)
      expect(received.status).toBe(200)
      expect(received.body).toMatchObject({ count: 1 })

      // Exactly one payment.success webhook id, signed, for this tenant.
      await eventually(
        async () =>
          receiver.hits.some(
            (h) => h.path === `/${c.tenant}` && h.body.event === 'payment.success',
          ),
        20_000,
        'the payment.success webhook',
      )
      const mine = receiver.hits.filter(
        (h) => h.path === `/${c.tenant}` && h.body.event === 'payment.success',
      )
      expect(mine.every((h) => h.verified)).toBe(true)
      expect(new Set(mine.map((h) => h.id)).size).toBe(1)

      // Analytics counts the money once.
      const summary = await eventually(
        async () => {
          const s = await admin.get('/api/v1/analytics/summary')
          return s.body?.total_transactions >= 1 ? s.body : null
        },
        20_000,
        'the transaction in analytics',
      )
      expect(summary).toMatchObject({ total_transactions: 1, total_amount: 150 })

      // The payment is in exactly one final state, listed once.
      if (c.kind === 'stk') {
        const list = await admin.get('/api/v1/payments?limit=50')
        expect(list.body.data).toHaveLength(1)
        expect(list.body.data[0]).toMatchObject({ status: 'success' })
      }
      const again = await send(c, key)
      expect(again.status).toBe(202)
    }, 120_000)
  }
})
