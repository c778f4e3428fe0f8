import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { api } from '../../test/support/client.ts'
import { verifyAuditFile } from './audit.ts'
import { type Daraja, ProviderError } from './daraja.ts'
import { type PaymentKit, paymentKit } from './test-kit.ts'

/**
 * Issue 14: a provider call whose answer was not recorded leaves the payment `unknown`, its key
 * bound, and never starts a second provider request; only a call that certainly never reached the
 * provider ends `failed` and frees the key.
 */
type Next = 'accept' | 'timeout' | 'refused' | 'hang'

function fakeProvider() {
  const calls: Array<{ kind: string; ref: string }> = []
  let next: Next = 'accept'
  let seq = 0
  const hung: Array<() => void> = []
  const answer = async <T>(kind: string, ref: string, ok: () => T): Promise<T> => {
    calls.push({ kind, ref })
    const mode = next
    if (mode === 'timeout')
      throw new ProviderError(0, null, 'provider unreachable: no answer within 10000 ms', true)
    if (mode === 'refused')
      throw new ProviderError(0, null, 'provider unreachable: connect ECONNREFUSED', false)
    if (mode === 'hang') await new Promise<void>((resolve) => hung.push(resolve))
    return ok()
  }
  const provider: Daraja = {
    stkPush: (input) =>
      answer('stk', new URL(input.callbackUrl).searchParams.get('ref')!, () => ({
        MerchantRequestID: `m-${++seq}`,
        CheckoutRequestID: `ws_CO_fake_${seq}`,
        ResponseCode: '0',
        ResponseDescription: 'ok',
      })),
    stkQuery: async () => ({ state: 'processing' }),
    b2c: (input) =>
      answer('b2c', input.originatorConversationId, () => ({
        ConversationID: `AG_fake_${++seq}`,
        OriginatorConversationID: input.originatorConversationId,
        ResponseCode: '0',
        ResponseDescription: 'ok',
      })),
  }
  return {
    provider,
    calls,
    set: (n: Next) => {
      next = n
    },
    release: () => {
      for (const r of hung.splice(0)) r()
    },
  }
}

describe('money safety of the payment service', () => {
  let k: PaymentKit
  let fake: ReturnType<typeof fakeProvider>
  let auth: Record<string, string>

  beforeAll(async () => {
    fake = fakeProvider()
    k = await paymentKit({ provider: fake.provider })
  })
  afterAll(() => k.cleanup())
  // Each test a tenant of its own: its payments, keys and lists are only the ones it made.
  let tenant = ''
  let made = 0
  beforeEach(async () => {
    tenant = `safe-${++made}`
    auth = await k.jsonAs({ tenantId: tenant, role: 'Manager', userId: 'usr_ann' })
  })

  const call = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(k.app, auth, headers).request(body === undefined ? 'GET' : 'POST', path, body)
  const push = (key: string, phone = '254712345678') =>
    call(
      '/api/v1/payments/stkpush',
      { phone_number: phone, amount: 10, account_reference: 'INV-1', transaction_desc: 'Order' },
      { 'idempotency-key': key },
    )
  const callsFor = (ref: string) => fake.calls.filter((c) => c.ref === ref).length

  it('leaves a push that timed out after sending unknown, with its key bound to it', async () => {
    fake.set('timeout')
    const callsBefore = fake.calls.length
    const first = await push('k-timeout')
    expect(first.status).toBe(202)
    expect(first.body).toMatchObject({ status: 'unknown' })
    const id = first.body.checkout_request_id as string
    expect(id).toMatch(/^pay_/)
    fake.set('accept')
    const retry = await push('k-timeout')
    expect(retry).toMatchObject({
      status: 202,
      body: { checkout_request_id: id, status: 'unknown' },
    })
    expect(callsFor(id)).toBe(1)
    expect(fake.calls.length - callsBefore).toBe(1)
    expect((await call(`/api/v1/payments/status/${id}`)).body).toMatchObject({ status: 'unknown' })
    const listed = await call('/api/v1/payments?status=unknown')
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([id])
  })

  it('settles an unknown payment when its authenticated callback arrives', async () => {
    fake.set('timeout')
    const unknown = await push('k-late')
    expect(unknown.body).toMatchObject({ status: 'unknown' })
    fake.set('accept')
    const id = unknown.body.checkout_request_id as string
    const url = k.payments.callbackUrl('stk', tenant, id)
    const res = await k.app.handle(
      new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          Body: {
            stkCallback: {
              MerchantRequestID: 'm-late',
              CheckoutRequestID: 'ws_CO_late',
              ResultCode: 1031,
              ResultDesc: 'Request cancelled by user',
            },
          },
        }),
      }),
    )
    expect(res.status).toBe(200)
    const s = await call('/api/v1/payments/status/ws_CO_late')
    expect(s.body).toMatchObject({ checkout_request_id: 'ws_CO_late', status: 'cancelled' })
    expect((await push('k-late')).body).toMatchObject({ status: 'cancelled' })
    expect(verifyAuditFile(k.kit.registry.pathOf('payment', tenant)).ok).toBe(true)
  })

  it('fails a push refused before it was sent and frees its key for a new attempt', async () => {
    fake.set('refused')
    const first = await push('k-refused')
    expect(first.status).toBe(502)
    fake.set('accept')
    const again = await push('k-refused')
    expect(again).toMatchObject({ status: 202, body: { status: 'pending' } })
    expect(again.body.checkout_request_id).toMatch(/^ws_CO_fake_/)
    const failed = await call('/api/v1/payments?status=failed')
    expect(failed.body.data).toHaveLength(1)
  })

  it('answers 409 IDEMPOTENCY_IN_PROGRESS at once while the first request is still calling the provider', async () => {
    fake.set('hang')
    const n = fake.calls.length
    const first = push('k-hang')
    while (fake.calls.length === n) await Bun.sleep(1)
    let firstAnswered = false
    void first.then(() => {
      firstAnswered = true
    })
    // The provider hangs until released: an answer at all is one that did not wait for the first
    // request (waiting would never end, so the race names that instead of a 60 s timeout).
    const second = await Promise.race([
      push('k-hang'),
      Bun.sleep(15_000).then(() => {
        throw new Error('the second request waited for the first one')
      }),
    ])
    expect(firstAnswered).toBe(false)
    expect(second.status).toBe(409)
    expect(second.body).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS' })
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    fake.set('accept')
    fake.release()
    const answered = await first
    expect(answered).toMatchObject({ status: 202, body: { status: 'pending' } })
    expect((await push('k-hang')).body).toEqual(answered.body)
  })

  it('keeps a B2C whose answer was lost unknown, and reconciliation reports it instead of failing it', async () => {
    // Reconciliation covers every tenant: what this test adds is counted from here.
    fake.set('accept')
    const unknownBefore = (await k.payments.reconcile({ olderThanS: 0 })).unknown
    fake.set('timeout')
    const first = await call(
      '/api/v1/payments/b2c',
      { phone_number: '254712345678', amount: 50, remarks: 'Refund 1' },
      { 'idempotency-key': 'k-b2c' },
    )
    expect(first).toMatchObject({ status: 202, body: { status: 'unknown' } })
    fake.set('accept')
    const before = fake.calls.length
    const retry = await call(
      '/api/v1/payments/b2c',
      { phone_number: '254712345678', amount: 50, remarks: 'Refund 1' },
      { 'idempotency-key': 'k-b2c' },
    )
    expect(retry).toMatchObject({ status: 202, body: { id: first.body.id, status: 'unknown' } })
    expect(fake.calls.length).toBe(before)
    const report = await k.payments.reconcile({ olderThanS: 0 })
    expect(report.unknown - unknownBefore).toBe(1)
    const d = await call(`/api/v1/payments/b2c/${first.body.id}`)
    expect(d.body).toMatchObject({ status: 'unknown' })
  })

  it('marks a request left initiating by a dead process unknown, never failed', async () => {
    fake.set('accept')
    const unknownBefore = (await k.payments.reconcile({ olderThanS: 0 })).unknown
    fake.set('hang')
    const n = fake.calls.length
    const dying = push('k-dead', '254700000001')
    while (fake.calls.length === n) await Bun.sleep(1)
    const ref = fake.calls.at(-1)!.ref
    // A new process on the same data, started a second later (the test clock moves, no wait): the
    // first one's provider call is nobody's now.
    k.kit.ctx.clock.advance(1000)
    const restarted = k.serviceWith().payments
    const report = await restarted.reconcile({ olderThanS: 0 })
    expect(report.unknown - unknownBefore).toBe(1)
    const s = await restarted.status(
      { tenantId: tenant, role: 'Manager', userId: 'usr_ann' } as never,
      ref,
    )
    expect(s).toMatchObject({ checkout_request_id: ref, status: 'unknown' })
    fake.set('accept')
    fake.release()
    await dying
  })
})
