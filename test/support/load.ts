import { expect } from 'bun:test'
import type { Answer } from './client.ts'
import { type api, eventually } from './platform.ts'

type Client = ReturnType<typeof api>

/** What a mixed load sent, what the platform acknowledged and what it refused, per phase. */
export interface MixedLoad {
  rows: { sent: number; acked: number; refused: number }
  /** Receipt numbers of the rows the platform acknowledged (200/201). */
  ackedReceipts: string[]
  payments: { sent: number; acked: string[]; refused: number }
  /**
   * Statuses of refused requests (no answer at all is 0) with their problem code, by the phase
   * they were sent in, and the phase their answer came in (a part killed while a request was on
   * its way refuses one sent before its phase began).
   */
  refusals: Map<
    string,
    Array<{
      kind: 'row' | 'payment'
      status: number
      code?: string
      detail?: string
      answered: string
      /** When the answer came (ms since the epoch). */
      at: number
    }>
  >
  /** Names the phase the next requests are counted under. */
  phase(name: string): void
  /** Waits until the load made the progress `ready` names (not a time), failing after 30 s. */
  until(what: string, ready: () => boolean): Promise<void>
  /** A condition that holds once `n` more rows (or payments) than now were acknowledged. */
  rowsPast(n: number): () => boolean
  paymentsPast(n: number): () => boolean
  /** A condition that holds once `n` more requests of each kind than now were sent. */
  sentPast(n: number): () => boolean
  stop(): Promise<void>
}

/**
 * A mixed load on one tenant as a client drives it: two loops posting one statement row each
 * (unique receipts), one loop asking for STK pushes every 50 ms. Requests that fail or get no
 * answer are counted as refused and the loops go on.
 *
 * @example
 * const load = startMixedLoad(admin, 'steady')
 * await load.until('warm', load.rowsPast(20))
 * await load.stop()
 */
export function startMixedLoad(admin: Client, tenant: string): MixedLoad {
  let running = true
  let current = 'before'
  let n = 0
  const rows = { sent: 0, acked: 0, refused: 0 }
  const ackedReceipts: string[] = []
  const payments = { sent: 0, acked: [] as string[], refused: 0 }
  const refusals: MixedLoad['refusals'] = new Map()
  /** Counted under the phase the request was sent in, with the one its answer came in. */
  const refuse = (
    phase: string,
    kind: 'row' | 'payment',
    res: { status: number; body: { code?: string; detail?: string } | null } | null,
  ) => {
    const list = refusals.get(phase) ?? []
    list.push({
      kind,
      answered: current,
      at: Date.now(),
      status: res?.status ?? 0,
      ...(res?.body?.code ? { code: res.body.code } : {}),
      ...(res?.body?.detail ? { detail: res.body.detail } : {}),
    })
    refusals.set(phase, list)
  }
  const importRows = async () => {
    while (running) {
      const i = n++
      const receipt = `KL${String(i).padStart(8, '0')}`
      const phase = current
      rows.sent++
      const res = await admin
        .post('/api/v1/parser/transactions', {
          transactions: [
            {
              occurred_at: new Date(Date.UTC(2026, 0, 5, 10, 0, i % 60)).toISOString(),
              amount: 10,
              direction: 'in',
              description: `Load row ${i}`,
              receipt_number: receipt,
            },
          ],
        })
        .catch(() => null)
      if (res && (res.status === 200 || res.status === 201)) {
        rows.acked++
        ackedReceipts.push(receipt)
      } else {
        rows.refused++
        refuse(phase, 'row', res)
        // Nothing is listening: do not spin on refused connections.
        if (!res) await Bun.sleep(20)
      }
    }
  }
  const pushPayments = async () => {
    while (running) {
      const i = payments.sent++
      const phase = current
      const res = await admin
        .post('/api/v1/payments/stkpush', {
          tenant_id: tenant,
          phone_number: `2547${String(i).padStart(8, '0')}`.slice(0, 12),
          amount: 1,
          account_reference: `LOAD${i}`,
          transaction_desc: 'Load',
        })
        .catch(() => null)
      if (res?.status === 202) payments.acked.push(res.body.checkout_request_id)
      else {
        payments.refused++
        refuse(phase, 'payment', res)
      }
      await Bun.sleep(50)
    }
  }
  const loops = Promise.all([importRows(), importRows(), pushPayments()])
  return {
    rows,
    ackedReceipts,
    payments,
    refusals,
    phase: (name) => {
      current = name
    },
    until: (what, ready) => eventually(ready, 30_000, `the load's progress ${what}`).then(() => {}),
    rowsPast(count) {
      const from = rows.acked
      return () => rows.acked >= from + count
    },
    paymentsPast(count) {
      const from = payments.acked.length
      return () => payments.acked.length >= from + count
    },
    sentPast(count) {
      const fromRows = rows.sent
      const fromPayments = payments.sent
      return () => rows.sent >= fromRows + count && payments.sent >= fromPayments + count
    },
    async stop() {
      running = false
      await loops
    },
  }
}

/**
 * After the load stopped: every accepted payment reaches a final state, and every acknowledged
 * row and succeeded payment is in analytics exactly once, in its list and in its rollups.
 * Returns the counts. A request whose answer the client never got (the process died under it)
 * may still have been applied: applied ≥ acknowledged, each once.
 */
export async function expectAppliedOnce(admin: Client, load: MixedLoad) {
  const settled = await eventually(
    async () => {
      const statuses = await Promise.all(
        load.payments.acked.map(
          async (id) => (await admin.get(`/api/v1/payments/status/${id}`)).body?.status,
        ),
      )
      // A final state each; an error answer (a breaker still open) is asked again. `unknown`
      // is the honest answer for a push whose provider died under it before recording it:
      // nothing but the provider's callback may settle it, and that may never come.
      return statuses.every((s) => ['success', 'failed', 'cancelled', 'unknown'].includes(s))
        ? statuses
        : null
    },
    60_000,
    'every accepted payment settled',
  )
  const succeeded = settled.filter((s) => s === 'success').length
  const all = async () => {
    const out: Array<{ receipt_number: string | null; source: string }> = []
    let cursor: string | null = null
    do {
      const path = `/api/v1/analytics/transactions?limit=500${cursor ? `&cursor=${cursor}` : ''}`
      const page: Answer<{ data: typeof out; next_cursor: string | null }> = await admin.get(path)
      if (page.status !== 200) return null
      out.push(...page.body.data)
      cursor = page.body.next_cursor
    } while (cursor)
    return out
  }
  // What the last look found missing, named in a failure.
  let missing = 'no list read'
  await eventually(
    async () => {
      const list = await all()
      if (!list) return null
      const receipts = new Set(list.map((t) => t.receipt_number))
      const payments = list.filter((t) => t.source === 'payment').length
      const rows = load.ackedReceipts.filter((r) => !receipts.has(r))
      missing = `${rows.length} of ${load.ackedReceipts.length} acknowledged rows (${rows.slice(0, 5).join(', ')}), ${payments} of ${succeeded} succeeded payments listed`
      return rows.length === 0 && payments >= succeeded
    },
    60_000,
    'every acknowledged row and settled payment in analytics',
  ).catch((err) => {
    throw new Error(`${(err as Error).message}: missing ${missing}`)
  })
  // The rollups count each transaction once too. A request whose answer was lost may still land
  // after the list was read: the summary is read first, then the list, until they agree (a
  // rollup counting a transaction twice never does).
  let total: unknown = null
  const applied = await eventually(
    async () => {
      total = (await admin.get('/api/v1/analytics/summary')).body?.total_transactions
      const list = await all()
      return list && list.length === total ? list : null
    },
    30_000,
    'the summary counting every listed transaction once',
  ).catch(async (err) => {
    const listed = (await all())?.length
    throw new Error(`${(err as Error).message}: summary ${total}, listed ${listed}`)
  })
  const receipts = applied.map((t) => t.receipt_number).filter(Boolean)
  expect(new Set(receipts).size).toBe(receipts.length)
  return {
    succeeded,
    applied: applied.length,
    /** Payments in analytics, with those whose answer the client never got. */
    paymentsApplied: applied.filter((t) => t.source === 'payment').length,
  }
}
