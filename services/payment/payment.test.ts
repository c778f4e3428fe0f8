import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { verifyAuditFile } from './audit.ts'
import { darajaTimestamp, parseDarajaTimestamp, stkPassword } from './daraja.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

const waitFor = async <T>(fn: () => T | Promise<T>, ms = 5000): Promise<T> => {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await Bun.sleep(10)
  }
}

describe('payment service with the simulator', () => {
  let k: SimulatorKit
  let auth: Record<string, string>

  beforeAll(async () => {
    // The app listens: its URL is the callback base, so the simulator calls it back.
    k = await simulatorKit({ delayMs: 0, listen: true, settings: { reconcileAfterS: 1 } })
    auth = await managerOf('acme')
  })
  afterAll(() => k.cleanup())

  /** A Manager of `tenantId`, for a test that needs payments of its own. */
  const managerOf = (tenantId: string) => k.jsonAs({ tenantId, role: 'Manager', userId: 'usr_ann' })
  // One open prompt per phone: each test pushes to phones of its own, so no test waits on another's.
  // The simulator's outcome follows the last four digits.
  let made = 0
  const phoneEnding = (ending: string) => `2547${String(++made).padStart(4, '0')}${ending}`
  let phone = ''
  beforeEach(() => {
    phone = phoneEnding('5678')
  })
  const push = (
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
    who: Record<string, string> = auth,
  ) =>
    k.app.handle(
      new Request(`${k.base}/api/v1/payments/stkpush`, {
        method: 'POST',
        headers: { ...who, ...headers },
        body: JSON.stringify({
          phone_number: phone,
          amount: 10,
          account_reference: 'INV-1',
          transaction_desc: 'Order 1',
          ...body,
        }),
      }),
    )
  const status = async (id: string, who: Record<string, string> = auth) =>
    (
      await k.app.handle(new Request(`${k.base}/api/v1/payments/status/${id}`, { headers: who }))
    ).json()
  /** Pushes `n` payments for `who`'s tenant and waits until each has its final status. */
  const settledPayments = async (n: number, who: Record<string, string>) => {
    for (let i = 0; i < n; i++) {
      const res = await push({}, {}, who)
      expect(res.status).toBe(202)
      const { checkout_request_id } = (await res.json()) as { checkout_request_id: string }
      await waitFor(async () => (await status(checkout_request_id, who)).status === 'success')
    }
  }

  it('speaks the Daraja timestamp and password', () => {
    const at = new Date('2026-01-02T03:04:05Z')
    expect(darajaTimestamp(at)).toBe('20260102060405')
    expect(parseDarajaTimestamp('20260102060405')?.toISOString()).toBe('2026-01-02T03:04:05.000Z')
    expect(stkPassword('174379', 'pk', '20260102060405')).toBe(
      Buffer.from('174379pk20260102060405').toString('base64'),
    )
  })

  it('pushes, gets the callback, confirms by query and emits one success event', async () => {
    const res = await push({})
    expect(res.status).toBe(202)
    const body = (await res.json()) as { checkout_request_id: string; status: string }
    expect(body.status).toBe('pending')
    const final = await waitFor(async () => {
      const s = await status(body.checkout_request_id)
      return s.status !== 'pending' ? s : null
    })
    expect(final).toMatchObject({ status: 'success', result_code: 0, amount: 10 })
    expect(final.mpesa_receipt_number).toMatch(/^[A-Z0-9]{10}$/)
    await k.kit.ctx.relay.flush()
    // Other tests' payments publish on the same bus: this payment's events are those naming it.
    const events = k.kit.bus.published.filter(
      (e) =>
        e.type === 'mobilemoney.transactions.success' &&
        (e.data as { checkout_request_id?: string }).checkout_request_id ===
          body.checkout_request_id,
    )
    expect(events).toHaveLength(1)
    expect(events[0]!.data).toMatchObject({
      amount: 10,
      direction: 'in',
      source: 'payment',
      user_id: 'usr_ann',
      checkout_request_id: body.checkout_request_id,
      receipt_number: final.mpesa_receipt_number,
    })
  })

  it('validates Daraja limits with 422 and field errors', async () => {
    const res = await push({
      phone_number: '0812345678',
      amount: 10.5,
      account_reference: 'x'.repeat(13),
      transaction_desc: 'y'.repeat(14),
    })
    expect(res.status).toBe(422)
    const p = (await res.json()) as { errors: Array<{ field: string }> }
    expect(p.errors.map((e) => e.field).sort()).toEqual([
      'account_reference',
      'amount',
      'phone_number',
      'transaction_desc',
    ])
  })

  it('answers the same for the same Idempotency-Key and 409 for another body', async () => {
    const a = await push({ amount: 20 }, { 'idempotency-key': 'k-1' })
    const b = await push({ amount: 20 }, { 'idempotency-key': 'k-1' })
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(await b.json()).toEqual(await a.json())
    const c = await push({ amount: 21 }, { 'idempotency-key': 'k-1' })
    expect(c.status).toBe(409)
    expect(((await c.json()) as { code: string }).code).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  it('refuses callbacks without a valid token for that checkout', async () => {
    const res = await push({ phone_number: phoneEnding('9999') })
    const { checkout_request_id } = (await res.json()) as { checkout_request_id: string }
    const rec = await k.seenBySimulator(checkout_request_id)
    const good = new URL(String(rec.CallBackURL))
    const cb = (checkout: string) => ({
      Body: {
        stkCallback: {
          MerchantRequestID: 'm',
          CheckoutRequestID: checkout,
          ResultCode: 1032,
          ResultDesc: 'Request cancelled by user',
        },
      },
    })
    const post = (url: string, b: unknown) =>
      k.app.handle(
        new Request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(b),
        }),
      )
    const bad = new URL(good)
    bad.searchParams.set('sig', 'A'.repeat(43))
    expect((await post(bad.toString(), cb(checkout_request_id))).status).toBe(401)
    const none = new URL(good)
    none.searchParams.delete('sig')
    expect((await post(none.toString(), cb(checkout_request_id))).status).toBe(401)
    expect((await post(good.toString(), cb('ws_CO_other'))).status).toBe(401)
    expect((await status(checkout_request_id)).status).toBe('pending')
    // The right token and checkout: accepted, and a repeat changes nothing.
    expect((await post(good.toString(), cb(checkout_request_id))).status).toBe(200)
    expect((await post(good.toString(), cb(checkout_request_id))).status).toBe(200)
    expect((await status(checkout_request_id)).status).toBe('cancelled')
  })

  it('settles a lost callback by reconciliation', async () => {
    const res = await push({ phone_number: phoneEnding('9999') })
    const { checkout_request_id } = (await res.json()) as { checkout_request_id: string }
    // The simulator sends callbacks in order: once a later push is settled by its own, the
    // lost one would have arrived if it had been sent.
    await settledPayments(1, auth)
    expect((await status(checkout_request_id)).status).toBe('pending')
    const report = await k.payments.reconcile({ olderThanS: 0 })
    expect(report.settled).toBeGreaterThanOrEqual(1)
    expect((await status(checkout_request_id)).status).toBe('success')
  })

  it('keeps a verifiable audit chain that breaks when a row is edited', async () => {
    await settledPayments(2, await managerOf('audit-co'))
    const path = k.kit.registry.pathOf('payment', 'audit-co')
    const ok = verifyAuditFile(path)
    expect(ok.ok).toBe(true)
    expect(ok.rows).toBeGreaterThan(5)
    const copy = `${path}.copy.db`
    const src = new Database(path)
    src.run(`VACUUM INTO '${copy}'`)
    src.close()
    const db = new Database(copy)
    db.run('UPDATE audit_log SET detail = \'{"amount":1}\' WHERE seq = 3')
    db.close()
    const broken = verifyAuditFile(copy)
    expect(broken.ok).toBe(false)
    expect(broken.broken?.seq).toBe(3)
    // Editing a payment itself (not its audit rows) shows up too.
    const copy2 = `${path}.copy2.db`
    const src2 = new Database(path)
    src2.run(`VACUUM INTO '${copy2}'`)
    src2.close()
    const db2 = new Database(copy2)
    db2.run("UPDATE payments SET amount_cents = amount_cents + 100 WHERE status = 'success'")
    db2.close()
    const edited = verifyAuditFile(copy2)
    expect(edited.ok).toBe(false)
    expect(edited.broken?.reason).toContain('amount')
  })

  it('lists recent payments with a cursor', async () => {
    const who = await managerOf('cursor-co')
    await settledPayments(3, who)
    const first = await k.app.handle(
      new Request(`${k.base}/api/v1/payments?limit=2`, { headers: who }),
    )
    expect(first.status).toBe(200)
    const page = (await first.json()) as {
      data: Array<{ id: string; checkout_request_id: string }>
      next_cursor: string | null
      has_more: boolean
    }
    expect(page.data).toHaveLength(2)
    expect(page.has_more).toBe(true)
    const second = (await (
      await k.app.handle(
        new Request(`${k.base}/api/v1/payments?limit=2&cursor=${page.next_cursor}`, {
          headers: who,
        }),
      )
    ).json()) as { data: Array<{ id: string }> }
    expect(second.data[0]!.id < page.data[1]!.id).toBe(true)
    const other = await k.kit.authFor({ tenantId: 'globex', role: 'Viewer' })
    const mine = page.data[0]!.checkout_request_id
    const res = await k.app.handle(
      new Request(`${k.base}/api/v1/payments/status/${mine}`, { headers: other }),
    )
    expect(res.status).toBe(404)
    const viewerPush = await k.app.handle(
      new Request(`${k.base}/api/v1/payments/stkpush`, {
        method: 'POST',
        headers: { ...other, 'content-type': 'application/json' },
        body: JSON.stringify({
          phone_number: '254712345678',
          amount: 1,
          account_reference: 'a',
          transaction_desc: 'b',
        }),
      }),
    )
    expect(viewerPush.status).toBe(403)
  })

  it('checks a body signature when the sender adds one', async () => {
    const res = await push({ phone_number: phoneEnding('9999') })
    const { checkout_request_id } = (await res.json()) as { checkout_request_id: string }
    const rec = await k.seenBySimulator(checkout_request_id)
    const raw = JSON.stringify({
      Body: {
        stkCallback: {
          MerchantRequestID: 'm',
          CheckoutRequestID: checkout_request_id,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 10 },
              { Name: 'MpesaReceiptNumber', Value: 'SIGNED1234' },
              { Name: 'TransactionDate', Value: 20260102060405 },
              { Name: 'PhoneNumber', Value: 254712349999 },
            ],
          },
        },
      },
    })
    const post = (sig: string) =>
      k.app.handle(
        new Request(String(rec.CallBackURL), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-callback-signature': sig },
          body: raw,
        }),
      )
    const good = `sha256=${new Bun.CryptoHasher('sha256', 'test-secret').update(raw).digest('hex')}`
    expect((await post(`${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`)).status).toBe(401)
    expect((await status(checkout_request_id)).status).toBe('pending')
    expect((await post(good)).status).toBe(200)
    const s = await status(checkout_request_id)
    expect(s).toMatchObject({ status: 'success', mpesa_receipt_number: 'SIGNED1234' })
  })

  it('lets only the operator run reconciliation over HTTP', async () => {
    const res = await k.app.handle(
      new Request(`${k.base}/api/v1/payments/reconcile`, { method: 'POST', headers: auth }),
    )
    expect(res.status).toBe(403)
    const op = await k.kit.authFor({ tenantId: 'platform', role: 'Admin' })
    const ok = await k.app.handle(
      new Request(`${k.base}/api/v1/payments/reconcile`, { method: 'POST', headers: op }),
    )
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ checked: expect.any(Number) })
  })
})
