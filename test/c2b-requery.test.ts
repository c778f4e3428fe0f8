import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

type Client = ReturnType<typeof api>

/** Daraja's TransTime (Nairobi time) now. */
const transTime = () =>
  new Date(Date.now() + 3 * 3600_000).toISOString().replace(/[-:T]/g, '').slice(0, 14)

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/**
 * A C2B confirmation whose Transaction Status query could not be made (the simulator answers
 * 503) stays `received`, uncounted, and is asked about again with backoff until M-Pesa answers:
 * then it is verified and counted once, also when the platform restarted in between.
 */
describe('C2B verification retried until the provider answers', () => {
  let p: TestPlatform
  const sim = () => api(p.url('simulator'))

  beforeAll(async () => {
    // Passes every 0.5 s; the first retry of a confirmation 1 s after it arrived.
    p = await startTestPlatform({ env: { MMP_RECONCILE_AFTER: '1' } })
  }, 90_000)
  afterAll(async () => {
    await p?.dispose()
  })

  const failStatusQueries = async (n: number) =>
    expect((await sim().post('/simulator/faults', { transaction_status: n })).status).toBe(200)

  const c2bPayment = async (client: Client, transId: string) => {
    const r = await client.get(`/api/v1/payments/c2b/payments/${transId}`)
    expect(r.status).toBe(200)
    return r.body as Record<string, any>
  }
  const transactionsOf = async (client: Client, receipt: string) => {
    const r = await client.get('/api/v1/analytics/transactions?limit=500')
    expect(r.status).toBe(200)
    return (r.body.data as Array<Record<string, any>>).filter((t) => t.receipt_number === receipt)
  }

  /** A payment M-Pesa made (the simulator knows it), confirmed while its status query fails. */
  async function confirmedWhileFailing(client: Client, url: string, shortcode: string, id: string) {
    expect(
      (
        await sim().post('/simulator/c2b/payments', {
          TransID: id,
          ShortCode: shortcode,
          Amount: 120,
          Msisdn: '254712300900',
        })
      ).status,
    ).toBe(200)
    const r = await post(url, {
      TransactionType: 'Buy Goods',
      TransID: id,
      TransTime: transTime(),
      TransAmount: '120.00',
      BusinessShortCode: shortcode,
      MSISDN: '2547 ***** 900',
      FirstName: 'JANE',
      LastName: 'DOE',
    })
    expect(r.status).toBe(200)
    const first = await eventually(
      async () => {
        const c = await c2bPayment(client, id)
        return /not verified yet/.test(c.status_reason ?? '') ? c : null
      },
      20_000,
      'the failed status query noted',
    )
    expect(first).toMatchObject({ status: 'received', counted: false })
    // Asked again (and failing again) at least once: the row was touched since.
    await eventually(
      async () => ((await c2bPayment(client, id)).updated_at > first.updated_at ? true : null),
      20_000,
      'a second status query',
    )
    expect((await c2bPayment(client, id)).status).toBe('received')
    expect(await transactionsOf(client, id)).toEqual([])
  }

  async function countedOnce(client: Client, id: string) {
    const row = await eventually(
      async () => {
        const c = await c2bPayment(client, id)
        return c.status === 'verified' ? c : null
      },
      30_000,
      `${id} verified`,
    )
    expect(row).toMatchObject({ counted: true, amount: 120 })
    const txns = await eventually(
      async () => {
        const t = await transactionsOf(client, id)
        return t.length ? t : null
      },
      20_000,
      `${id} in analytics`,
    )
    expect(txns).toHaveLength(1)
  }

  it('verifies it once the provider answers again', async () => {
    const admin = await createTenantAdmin(p, { id: 'retrying' })
    const reg = await admin.post('/api/v1/payments/c2b/register', {
      shortcode: '600810',
      response_type: 'Completed',
      initiator_name: 'retryingapi',
      security_credential: 'c3VwZXItc2VjcmV0',
    })
    expect(reg.status).toBe(201)
    await failStatusQueries(1_000_000)
    await confirmedWhileFailing(admin, reg.body.confirmation_url, '600810', 'TRETRY0001')
    await failStatusQueries(0)
    await countedOnce(admin, 'TRETRY0001')
  }, 90_000)

  it('loses nothing across a kill and restart', async () => {
    const admin = await createTenantAdmin(p, { id: 'restarting' })
    const reg = await admin.post('/api/v1/payments/c2b/register', {
      shortcode: '600820',
      response_type: 'Completed',
      initiator_name: 'restartingapi',
      security_credential: 'c3VwZXItc2VjcmV0',
    })
    expect(reg.status).toBe(201)
    await failStatusQueries(1_000_000)
    await confirmedWhileFailing(admin, reg.body.confirmation_url, '600820', 'TRESTART01')
    // Killed, not stopped: whatever was in flight is lost with the process.
    await p.kill()
    await p.restart()
    // A restarted simulator answers again (its fault switch is not kept).
    await failStatusQueries(0)
    await countedOnce(admin, 'TRESTART01')
  }, 120_000)
})
