import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSimulator } from '../services/simulator/index.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

/**
 * The platform is killed at each money fault point while an external simulator (a provider that
 * outlives it and keeps calling back, retrying like Daraja) holds the other end. Every round
 * sends a burst of STK pushes with Idempotency-Keys, dies at the fault point, comes back, retries
 * every key as a client would, and reconciles. Then every charge the provider made is one
 * `success`, nothing is charged twice, and no payment is left `unknown` or pending.
 */
const FAULTS = ['payment.after_provider_accepted', 'payment.after_settle_commit'] as const
const ROUNDS = 2
const BURST = 6
/** Outcomes by the phone's last four digits (simulator): success, cancelled, timeout, failed. */
const ENDINGS = ['5678', '1032', '1037', '0001', '5679', '5680']
const FINAL = ['success', 'failed', 'cancelled', 'timeout']
type Sent = { key: string; phone: string; body: Record<string, unknown> }

describe('money survives a crash at every fault point', () => {
  let p: TestPlatform
  let sim: ReturnType<typeof createSimulator>
  let simApi: ReturnType<typeof api>
  let shop: ReturnType<typeof api>
  let operator: ReturnType<typeof api>
  const state = mkdtempSync(join(tmpdir(), 'mmp-money-crash-'))

  beforeAll(async () => {
    sim = createSimulator({
      delayMs: 400,
      version: 'test',
      statePath: join(state, 'sim.db'),
    }).listen({ port: 0, hostname: '127.0.0.1' })
    simApi = api(`http://127.0.0.1:${sim.server!.port}`)
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,payment,broker',
      env: {
        MMP_SIMULATOR_URL: `http://127.0.0.1:${sim.server!.port}`,
        MMP_RECONCILE_AFTER: '1',
      },
    })
    operator = api(p.gateway, await p.login())
    shop = await createTenantAdmin(p, { id: 'crash-shop', plan: 'pro' })
  }, 60_000)

  afterAll(async () => {
    await p?.dispose()
    await sim?.stop()
    rmSync(state, { recursive: true, force: true })
  })

  const push = (s: Sent) =>
    shop.post('/api/v1/payments/stkpush', s.body, { 'idempotency-key': s.key }).catch(() => null)

  const gatewayDown = async () => {
    try {
      await fetch(`${p.gateway}/health`, { signal: AbortSignal.timeout(1000) })
      return false
    } catch {
      return true
    }
  }

  /** One burst of pushes with keys, each to a phone of its own, outcomes by the phone's ending. */
  const burstOf = (tag: string) =>
    ENDINGS.slice(0, BURST).map((end, i) => {
      const phone = `2547${tag}${String(i).padStart(2, '0')}${end}`
      return {
        key: `crash-${tag}-${i}`,
        phone,
        body: {
          phone_number: phone,
          amount: 100 + i,
          account_reference: `CR${tag}${i}`,
          transaction_desc: 'Crash test',
        },
      }
    })

  /** Every charge the provider made for these phones is one success here, and nothing is open. */
  async function expectChargedOnce(sent: Sent[]) {
    const list = (await shop.get('/api/v1/payments?limit=500')).body.data as Array<{
      phone_number: string
      status: string
      mpesa_receipt_number: string | null
    }>
    const phones = new Set(sent.map((s) => s.phone))
    const mine = list.filter((x) => phones.has(x.phone_number))
    expect(mine.filter((x) => !FINAL.includes(x.status))).toEqual([])
    for (const s of sent) {
      const received = await simApi.get(`/simulator/received?phone=${s.phone}&kind=stk`)
      const charges: string[] = []
      for (const r of received.body.requests as Array<{ id: string }>) {
        const rec = await simApi.get(`/simulator/requests/${r.id}`)
        if (rec.body.outcome.resultCode === 0) charges.push(rec.body.receipt as string)
      }
      const paid = mine.filter((x) => x.phone_number === s.phone && x.status === 'success')
      expect({ phone: s.phone, paid: paid.length }).toEqual({
        phone: s.phone,
        paid: charges.length,
      })
      for (const x of paid)
        if (x.mpesa_receipt_number) expect(charges).toContain(x.mpesa_receipt_number)
    }
  }

  for (const fault of FAULTS)
    it(`loses and doubles nothing when killed at ${fault}, round after round`, async () => {
      const sent: Sent[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const burst = burstOf(`${FAULTS.indexOf(fault)}${round}`)
        sent.push(...burst)
        await p.kill()
        await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: fault })
        await Promise.all(burst.map(push))
        await eventually(gatewayDown, 20_000, `the platform to die at ${fault}`)
        expect(p.logs()).toContain(`fault point ${fault} reached`)
        await p.kill()
        await p.restart({ MMP_FAULT: '' })
        // Clients retry every key; the operator reconciles until nothing is open.
        await Promise.all(burst.map(push))
        let last = ''
        await eventually(
          async () => {
            const r = await operator.post('/api/v1/payments/reconcile', {})
            const list = await shop.get('/api/v1/payments?limit=500')
            const open = (
              list.body.data as Array<{ status: string; phone_number: string; created_at: string }>
            ).filter(
              (x) => burst.some((b) => b.phone === x.phone_number) && !FINAL.includes(x.status),
            )
            last = JSON.stringify({ report: r.body, open })
            return r.status === 200 && open.length === 0
          },
          // A push that died before it was sent is known to be unpaid once its prompt could no
          // longer be answered: a minute after it started.
          120_000,
          'every payment to end',
        ).catch((err) => {
          throw new Error(
            `${(err as Error).message}: ${last}\n${p.logs().split('\n').slice(-20).join('\n')}`,
          )
        })
      }
      await expectChargedOnce(sent)
    }, 400_000)

  it('loses and doubles no disbursement when killed at b2c.after_provider_accepted', async () => {
    const fault = 'b2c.after_provider_accepted'
    const outs = ['5678', '0001', '2001', '5690']
    const burst = outs.map((end, i) => ({
      key: `crash-b2c-${i}`,
      phone: `25470990${i}${end.slice(1)}`,
      body: {
        phone_number: `25470990${i}${end.slice(1)}`,
        amount: 200 + i,
        remarks: 'Crash refund',
      },
    }))
    const send = (b: (typeof burst)[number]) =>
      shop.post('/api/v1/payments/b2c', b.body, { 'idempotency-key': b.key }).catch(() => null)
    await p.kill()
    await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: fault })
    await Promise.all(burst.map(send))
    await eventually(gatewayDown, 20_000, `the platform to die at ${fault}`)
    await p.kill()
    await p.restart({ MMP_FAULT: '' })
    for (const b of burst) {
      const id = await eventually(
        async () => {
          const r = await send(b)
          return r?.status === 202 ? (r.body.id as string) : null
        },
        20_000,
        `a 202 for ${b.key}`,
      )
      let last = ''
      const done = await eventually(
        async () => {
          await operator.post('/api/v1/payments/reconcile', {})
          const d = await shop.get(`/api/v1/payments/b2c/${id}`)
          last = JSON.stringify(d.body)
          return FINAL.includes(d.body.status) ? d.body : null
        },
        60_000,
        `disbursement ${id} to end`,
      ).catch((err) => {
        throw new Error(`${(err as Error).message}: ${last}`)
      })
      const received = await simApi.get(`/simulator/received?phone=${b.phone}&kind=b2c`)
      let paid = 0
      for (const r of received.body.requests as Array<{ id: string }>) {
        const rec = await simApi.get(`/simulator/requests/${r.id}`)
        if (rec.body.outcome.resultCode === 0) paid++
      }
      expect({ phone: b.phone, paid: done.status === 'success' ? 1 : 0 }).toEqual({
        phone: b.phone,
        paid,
      })
    }
  }, 200_000)
})
