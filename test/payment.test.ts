import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const root = join(import.meta.dir, '..')

interface Envelope {
  id: string
  type: string
  tenant_id: string
  data: Record<string, any>
}

describe('payments end to end through the gateway', () => {
  let p: TestPlatform
  let acme: ReturnType<typeof api>
  let globex: ReturnType<typeof api>
  let operator: ReturnType<typeof api>
  let sub: MqttClient
  const events: Envelope[] = []

  const userToken = async (tenant: string, email: string) => {
    const created = await operator.post('/api/v1/auth/users', {
      tenant_id: tenant,
      email,
      role: 'Manager',
      password: 'payment-test-pw',
    })
    expect(created.status).toBe(201)
    return p.login(email, 'payment-test-pw')
  }

  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,payment,simulator,broker',
      env: {
        MMP_RECONCILE_AFTER: '1',
        MMP_RATE_LIMIT_FREE: '1000000',
        MMP_RATE_LIMIT_IP: '1000000',
      },
    })
    const operatorToken = await p.login()
    operator = api(p.gateway, operatorToken)
    await createTenants(p.gateway, operatorToken, 'acme', 'globex')
    acme = api(p.gateway, await userToken('acme', 'ann@acme.test'))
    globex = api(p.gateway, await userToken('globex', 'bob@globex.test'))
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${p.offset + 1883}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `payment-test-${p.offset}`,
      // Back within 100 ms of a restarted platform's broker, long before the simulator fires the
      // callbacks it kept: the embedded broker keeps nothing for a subscriber that comes later.
      reconnectPeriod: 100,
    })
    sub.on('message', (_topic, payload) => events.push(JSON.parse(payload.toString())))
    await sub.subscribeAsync(
      ['mobilemoney.transactions.success', 'mobilemoney.transactions.failed', 'mobilemoney.usage'],
      { qos: 1 },
    )
  }, 60_000)

  afterAll(async () => {
    await sub?.endAsync()
    await p?.dispose()
  })

  const push = (
    client: ReturnType<typeof api>,
    phone: string,
    extra: Record<string, unknown> = {},
  ) =>
    client.post('/api/v1/payments/stkpush', {
      tenant_id: client === globex ? 'globex' : 'acme',
      phone_number: phone,
      amount: 150,
      account_reference: 'INV-42',
      transaction_desc: 'Invoice 42',
      ...extra,
    })

  const finalStatus = (client: ReturnType<typeof api>, id: string) =>
    eventually(
      async () => {
        const r = await client.get(`/api/v1/payments/status/${id}`)
        expect(r.status).toBe(200)
        return r.body.status !== 'pending' ? r.body : null
      },
      15_000,
      `the final status of ${id}`,
    )

  const cases = [
    { phone: '254712345678', status: 'success', code: 0 },
    { phone: '254712341032', status: 'cancelled', code: 1032 },
    { phone: '254712341037', status: 'timeout', code: 1037 },
    { phone: '254712340001', status: 'failed', code: 1 },
    { phone: '254112342001', status: 'failed', code: 2001 },
  ]
  for (const c of cases) {
    it(`ends ${c.status} for result code ${c.code}, with the success event only on success`, async () => {
      const res = await push(acme, c.phone)
      expect(res.status).toBe(202)
      expect(res.body).toMatchObject({ status: 'pending' })
      const id = res.body.checkout_request_id as string
      expect(typeof res.body.merchant_request_id).toBe('string')
      const final = await finalStatus(acme, id)
      expect(final).toMatchObject({
        checkout_request_id: id,
        status: c.status,
        result_code: c.code,
        amount: 150,
        phone_number: c.phone,
        account_reference: 'INV-42',
      })
      expect(typeof final.result_desc).toBe('string')
      expect(typeof final.updated_at).toBe('string')
      const topic =
        c.status === 'success'
          ? 'mobilemoney.transactions.success'
          : 'mobilemoney.transactions.failed'
      const e = await eventually(
        async () => events.find((x) => x.type === topic && x.data.checkout_request_id === id),
        15_000,
        'the event',
      )
      expect(e.tenant_id).toBe('acme')
      if (c.status === 'success') {
        expect(final.mpesa_receipt_number).toMatch(/^[A-Z0-9]{10}$/)
        expect(e.data).toMatchObject({
          amount: 150,
          direction: 'in',
          counterparty_phone: c.phone,
          receipt_number: final.mpesa_receipt_number,
          source: 'payment',
          account_reference: 'INV-42',
          balance: null,
        })
        expect(e.data.transaction_id).toMatch(/^txn_/)
        expect(typeof e.data.user_id).toBe('string')
      } else {
        expect(final.mpesa_receipt_number).toBeNull()
        expect(e.data).toMatchObject({ status: c.status, result_code: c.code })
        // The failed event is out, so a success for the same payment would have been settled first.
        expect(
          events.some(
            (x) =>
              x.type === 'mobilemoney.transactions.success' && x.data.checkout_request_id === id,
          ),
        ).toBe(false)
      }
    })
  }

  it('validates Daraja limits with 422', async () => {
    const bad = await push(acme, '0812345678', {
      amount: 10.5,
      account_reference: 'ABCDEFGHIJKLM',
      transaction_desc: 'fourteen chars',
    })
    expect(bad.status).toBe(422)
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'account_reference',
      'amount',
      'phone_number',
      'transaction_desc',
    ])
    expect((await push(acme, '254712345678', { amount: 0 })).status).toBe(422)
    expect((await push(acme, '254712345678', { tenant_id: 'globex' })).status).toBe(403)
  })

  it('answers the same for a repeated Idempotency-Key and 409 for a different body', async () => {
    // A phone of its own: its push stays open a moment, and an open prompt holds the phone (PHONE_BUSY).
    const idemPhone = '254712345644'
    const h = { 'idempotency-key': `key-${Date.now()}` }
    const a = await acme.post(
      '/api/v1/payments/stkpush',
      {
        tenant_id: 'acme',
        phone_number: idemPhone,
        amount: 5,
        account_reference: 'IDEM',
        transaction_desc: 'idem',
      },
      h,
    )
    const b = await acme.post(
      '/api/v1/payments/stkpush',
      {
        tenant_id: 'acme',
        phone_number: idemPhone,
        amount: 5,
        account_reference: 'IDEM',
        transaction_desc: 'idem',
      },
      h,
    )
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.body).toEqual(a.body)
    const c = await acme.post(
      '/api/v1/payments/stkpush',
      {
        tenant_id: 'acme',
        phone_number: idemPhone,
        amount: 6,
        account_reference: 'IDEM',
        transaction_desc: 'idem',
      },
      h,
    )
    expect(c.status).toBe(409)
    expect(c.body.code).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  it('refuses forged, wrong-signature and other-checkout callbacks with 401, and a lost callback is settled by reconciliation', async () => {
    const a = await push(acme, '254712345611')
    const aId = a.body.checkout_request_id as string
    await finalStatus(acme, aId)
    const lost = await push(acme, '254799999999')
    const bId = lost.body.checkout_request_id as string
    const sim = api(p.url('simulator'))
    const aUrl = new URL((await sim.get(`/simulator/requests/${aId}`)).body.request.CallBackURL)
    expect(aUrl.pathname).toBe('/api/v1/payments/callback')
    const bUrl = new URL((await sim.get(`/simulator/requests/${bId}`)).body.request.CallBackURL)
    const cancel = (checkout: string) => ({
      Body: {
        stkCallback: {
          MerchantRequestID: '1-2-3',
          CheckoutRequestID: checkout,
          ResultCode: 1032,
          ResultDesc: 'Request cancelled by user',
        },
      },
    })
    const anon = api(p.gateway)
    // Forged: no token at all.
    const forged = await anon.post('/api/v1/payments/callback', cancel(bId))
    expect(forged.status).toBe(401)
    const garbage = await fetch(`${p.gateway}/api/v1/payments/callback?tid=acme&ref=x&sig=y`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    })
    expect(garbage.status).toBe(401)
    // Wrong signature on B's own URL.
    const wrong = new URL(bUrl)
    wrong.searchParams.set('sig', `${bUrl.searchParams.get('sig')!.slice(0, -2)}xx`)
    expect((await anon.post(wrong.pathname + wrong.search, cancel(bId))).status).toBe(401)
    // A's valid token replayed for B's checkout.
    const replay = await anon.post(aUrl.pathname + aUrl.search, cancel(bId))
    expect(replay.status).toBe(401)
    expect(replay.headers.get('content-type')).toContain('application/problem+json')
    const still = await acme.get(`/api/v1/payments/status/${bId}`)
    expect(still.body.status).toBe('pending')
    // The lost callback (9999) is settled by the reconciliation job asking the provider.
    const final = await finalStatus(acme, bId)
    expect(final).toMatchObject({ status: 'success', result_code: 0 })
    await eventually(
      async () =>
        events.find(
          (x) =>
            x.type === 'mobilemoney.transactions.success' && x.data.checkout_request_id === bId,
        ),
      15_000,
      'the reconciled success event',
    )
    // A repeat of A's genuine callback is accepted and changes nothing.
    const again = await anon.post(aUrl.pathname + aUrl.search, cancel(aId))
    expect(again.status).toBe(200)
    expect((await acme.get(`/api/v1/payments/status/${aId}`)).body.status).toBe('success')
  })

  it("hides one tenant's payments from another (404)", async () => {
    const a = await push(acme, '254712345622')
    const id = a.body.checkout_request_id as string
    const other = await globex.get(`/api/v1/payments/status/${id}`)
    expect(other.status).toBe(404)
    expect((await acme.get(`/api/v1/payments/status/${id}`)).status).toBe(200)
    expect((await operator.get(`/api/v1/payments/status/${id}`)).status).toBe(200)
  })

  it('loses and doubles nothing under 500 concurrent STK pushes', async () => {
    const results = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        push(acme, `2547${String(i).padStart(4, '0')}5678`, { account_reference: `C${i}` }),
      ),
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s !== 202)).toEqual([])
    const ids = new Set(results.map((r) => r.body.checkout_request_id as string))
    expect(ids.size).toBe(500)
    await eventually(
      async () => {
        const seen = events.filter(
          (x) =>
            x.type === 'mobilemoney.transactions.success' && ids.has(x.data.checkout_request_id),
        )
        return seen.length >= 500
      },
      60_000,
      'every concurrent payment to settle',
    )
    // A later payment of the same tenant leaves through the same outbox behind every event the
    // 500 wrote: once its event is here, a doubled one would be here too.
    const marker = await push(acme, '254712345633', { account_reference: 'MARKER' })
    expect(marker.status).toBe(202)
    await eventually(
      () =>
        events.find(
          (x) =>
            x.type === 'mobilemoney.transactions.success' &&
            x.data.checkout_request_id === marker.body.checkout_request_id,
        ),
      15_000,
      'the success event of a later payment',
    )
    const seen = events.filter(
      (x) => x.type === 'mobilemoney.transactions.success' && ids.has(x.data.checkout_request_id),
    )
    expect(new Set(seen.map((x) => x.data.checkout_request_id)).size).toBe(500)
    expect(new Set(seen.map((x) => x.data.transaction_id)).size).toBe(500)
    const one = [...ids][123]!
    expect((await acme.get(`/api/v1/payments/status/${one}`)).body.status).toBe('success')
  }, 90_000)

  it('disburses with B2C and publishes an outgoing transaction', async () => {
    const res = await acme.post('/api/v1/payments/b2c', {
      phone_number: '254712345678',
      amount: 300,
      remarks: 'Refund order 7',
    })
    expect(res.status).toBe(202)
    expect(res.body.status).toBe('pending')
    const id = res.body.id as string
    const final = await eventually(
      async () => {
        const r = await acme.get(`/api/v1/payments/b2c/${id}`)
        return r.body.status !== 'pending' ? r.body : null
      },
      15_000,
      'the B2C result',
    )
    expect(final).toMatchObject({ status: 'success', result_code: 0, amount: 300 })
    const e = await eventually(
      async () =>
        events.find(
          (x) =>
            x.type === 'mobilemoney.transactions.success' &&
            x.data.transaction_id === final.transaction_id,
        ),
      15_000,
      'the B2C event',
    )
    expect(e.data).toMatchObject({
      direction: 'out',
      amount: 300,
      counterparty_phone: '254712345678',
    })
    const failed = await acme.post('/api/v1/payments/b2c', {
      phone_number: '254712340001',
      amount: 300,
      remarks: 'Refund order 8',
    })
    const f = await eventually(
      async () => {
        const r = await acme.get(`/api/v1/payments/b2c/${failed.body.id}`)
        return r.body.status !== 'pending' ? r.body : null
      },
      15_000,
      'the failed B2C result',
    )
    expect(f).toMatchObject({ status: 'failed', result_code: 1 })
  })

  it('runs reconciliation from the CLI and the audit chain verifies, then breaks visibly when a row is edited', async () => {
    // A settled payment of its own to edit below.
    const own = await push(acme, '254712345678', { account_reference: 'AUDIT-1' })
    expect(own.status).toBe(202)
    expect(await finalStatus(acme, own.body.checkout_request_id)).toMatchObject({
      status: 'success',
    })
    const env = {
      ...process.env,
      MMP_PORT_OFFSET: String(p.offset),
      MMP_DATA_DIR: p.dataDir,
      MMP_OPERATOR_EMAIL: OPERATOR.email,
      MMP_OPERATOR_PASSWORD: OPERATOR.password,
    }
    const rec = Bun.spawnSync(
      [process.execPath, join(root, 'cmd/main.ts'), 'payments', 'reconcile'],
      {
        env,
      },
    )
    expect(rec.exitCode).toBe(0)
    expect(rec.stdout.toString() + rec.stderr.toString()).toContain('checked')

    const verify = () =>
      Bun.spawnSync(
        [process.execPath, join(root, 'cmd/main.ts'), 'audit', 'verify', '--data-dir', p.dataDir],
        {
          env,
        },
      )
    const ok = verify()
    expect(ok.exitCode).toBe(0)
    const shared = join(p.dataDir, 'tenants', '_shared', 'payment.db')
    // Editing a payment (not its audit rows) shows up as a payment that disagrees with its trail.
    const edit = new Database(shared)
    edit.run('PRAGMA busy_timeout = 5000')
    const paid = edit
      .query<{ id: string; amount_cents: number }, []>(
        "SELECT id, amount_cents FROM payments WHERE status = 'success' AND account_reference = 'AUDIT-1' LIMIT 1",
      )
      .get()!
    edit.run('UPDATE payments SET amount_cents = ? WHERE id = ?', [paid.amount_cents * 10, paid.id])
    const tampered = verify()
    expect(tampered.exitCode).toBe(1)
    expect(tampered.stdout.toString()).toContain(paid.id)
    edit.run('UPDATE payments SET amount_cents = ? WHERE id = ?', [paid.amount_cents, paid.id])
    edit.close()
    expect(verify().exitCode).toBe(0)
    const db = new Database(join(p.dataDir, 'tenants', '_shared', 'payment.db'))
    db.run('PRAGMA busy_timeout = 5000')
    // The latest row: how many there are depends on which tests ran before.
    const row = db
      .query<{ seq: number; id: string }, []>(
        'SELECT seq, id FROM audit_log ORDER BY seq DESC LIMIT 1',
      )
      .get()!
    db.run(`UPDATE audit_log SET detail = '{"amount":1}' WHERE seq = ?`, [row.seq])
    db.close()
    const broken = verify()
    expect(broken.exitCode).toBe(1)
    const out = broken.stdout.toString() + broken.stderr.toString()
    expect(out).toContain(`row ${row.seq}`)
    expect(out).toContain(row.id)
  })

  it('keeps a pending payment across a SIGKILL and settles it once after the restart', async () => {
    const res = await push(acme, '254733339999')
    expect(res.status).toBe(202)
    const id = res.body.checkout_request_id as string
    await p.kill()
    await p.restart()
    const final = await finalStatus(acme, id).catch((err) => {
      throw new Error(`${(err as Error).message}\n${p.logs().split('\n').slice(-30).join('\n')}`)
    })
    expect(final.status).toBe('success')
    await eventually(
      async () =>
        events.find(
          (x) => x.type === 'mobilemoney.transactions.success' && x.data.checkout_request_id === id,
        ),
      15_000,
      'the success event after the restart',
    )
    const ids = new Set(
      events
        .filter(
          (x) => x.type === 'mobilemoney.transactions.success' && x.data.checkout_request_id === id,
        )
        .map((x) => `${x.id}/${x.data.transaction_id}`),
    )
    expect(ids.size).toBe(1)
  }, 60_000)
})
