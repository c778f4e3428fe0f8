import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type EventEnvelope, topics } from '../../schema/events.ts'
import { migrations } from '../../schema/parser/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createParserApp } from './routes.ts'
import { storeTransactions } from './store.ts'

let kit: TestKit
let app: ReturnType<typeof createParserApp>
beforeAll(async () => {
  kit = await createTestKit('parser', { migrations })
  app = createParserApp(kit.ctx)
})
afterAll(() => kit.cleanup())

/** More rows than one stored chunk (import-statement.ts, 5,000), so an import commits several. */
const ROWS = 8000
const receipt = (i: number) => `RCP${String(i).padStart(7, '0')}`
const statement = [
  'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
  ...Array.from(
    { length: ROWS },
    (_, i) =>
      `${receipt(i)},2024-01-05 ${String(i % 24).padStart(2, '0')}:22:10,"Funds received from 0712345678 - JOHN DOE",Completed,"1,000.00",,"${i + 1},000.00"`,
  ),
].join('\n')

const upload = async (tenantId: string) => {
  const form = new FormData()
  form.append('file', new File([statement], 'statement.csv', { type: 'text/csv' }))
  const res = await app.handle(
    new Request('http://localhost/api/v1/statements', {
      method: 'POST',
      headers: await kit.authFor({ tenantId, role: 'Admin' }),
      body: form,
    }),
  )
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}
const rawOf = (events: EventEnvelope[], tenantId: string) =>
  events
    .filter((e) => e.type === topics.transactionsRaw && e.tenant_id === tenantId)
    .flatMap((e) => (e.data as { transactions: Array<{ receipt_number: string }> }).transactions)
const count = (tenantId: string, sql: string) =>
  kit.registry.tenant('parser', tenantId).sqlite.query<{ n: number }, []>(sql).get()?.n
/** The relay's drain after an import starts on the next turn of the loop; this waits it out. */
const relayed = async (tenantId: string) => {
  await new Promise<void>((resolve) => setImmediate(resolve))
  await kit.ctx.relay.settled(kit.registry.tenant('parser', tenantId))
}

describe('a statement import of several chunks', () => {
  it('relays its events once it is done, not chunk by chunk while it still writes', async () => {
    // Each raw batch notes whether the import had finished (its row in `imports`) when it went out.
    const importDone: boolean[] = []
    await kit.bus.subscribe(topics.transactionsRaw, (e) => {
      if (e.tenant_id === 'whole')
        importDone.push(
          count('whole', "SELECT count(*) AS n FROM imports WHERE tenant_id = 'whole'") === 1,
        )
    })
    const res = await upload('whole')
    expect(res).toMatchObject({ status: 201, body: { accepted: ROWS } })
    await relayed('whole')
    expect(rawOf(kit.bus.published, 'whole')).toHaveLength(ROWS)
    expect(importDone.length).toBeGreaterThan(1)
    expect(importDone.every(Boolean)).toBe(true)
    expect(count('whole', 'SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL')).toBe(0)
  })

  it('keeps what a failed import committed whole, with its events relayed, and none of the rest', async () => {
    const db = kit.registry.tenant('parser', 'broken')
    // The disk gives out on a row of the last chunk.
    db.sqlite.run(`CREATE TRIGGER give_out BEFORE INSERT ON transactions
      WHEN NEW.receipt_number = '${receipt(ROWS - 500)}' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
    const res = await upload('broken')
    db.sqlite.run('DROP TRIGGER give_out')
    expect(res).toMatchObject({ status: 503, body: { code: 'STORAGE_UNAVAILABLE' } })
    await relayed('broken')
    const stored = db.sqlite
      .query<{ receipt_number: string }, []>(
        "SELECT receipt_number FROM transactions WHERE tenant_id = 'broken'",
      )
      .all()
      .map((r) => r.receipt_number)
    expect(stored.length).toBeGreaterThan(0)
    expect(stored.length).toBeLessThan(ROWS - 500)
    // Every stored row went out in a raw batch and every raw batch's row is stored: a chunk's rows
    // and its events committed together or not at all.
    const raw = rawOf(kit.bus.published, 'broken').map((t) => t.receipt_number)
    expect(raw.sort()).toEqual(stored.sort())
    expect(count('broken', 'SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL')).toBe(0)
    expect(count('broken', "SELECT count(*) AS n FROM imports WHERE tenant_id = 'broken'")).toBe(0)
    expect(
      db.sqlite.query<{ n: number }, []>('PRAGMA wal_autocheckpoint').get() as unknown,
    ).toEqual({ wal_autocheckpoint: 1000 })
  })
})

describe('a statement import', () => {
  it('stores each row as read and sends it, in file order, as the row stored', async () => {
    const tenantId = 'exact'
    const db = kit.registry.tenant('parser', tenantId)
    // Reported by SMS before the statement came: the statement's row matches it.
    storeTransactions(kit.ctx, db, {
      tenantId,
      userId: 'usr_sms',
      source: 'sms',
      items: [
        {
          transaction: {
            occurredAt: '2024-01-05T06:00:00.000Z',
            amount: 70_000,
            direction: 'in',
            counterpartyName: null,
            counterpartyPhone: null,
            description: 'sms',
            receiptNumber: 'SMSREC0001',
            balance: null,
          },
          ref: { index: 0 },
        },
      ],
      checkLimit: false,
    })
    await kit.ctx.relay.flush()
    const published = kit.bus.published.length
    const csv = [
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
      'RCPA000001,2024-01-05 08:00:00,"Funds received from 0712345678 - JOHN DOE",Completed,"1,000.50",,"1,000.50"',
      'RCPA000002,2024-01-05 09:15:30,"Pay Bill to 888880 - KPLC PREPAID Acc. 1234",Completed,,"-250.00",750.50',
      'RCPA000001,2024-01-05 08:00:00,"Funds received from 0712345678 - JOHN DOE",Completed,"1,000.50",,"1,000.50"',
      'RCPA000003,2024-01-05 10:00:00,"Customer Transfer to 0722000000 - ANN",Failed,,"-10.00",750.50',
      'X!,2024-01-05 10:30:00,"Customer Transfer to 0722000000 - ANN",Completed,,"-10.00",740.50',
      'RCPA000004,2024-01-05 11:00:00,"Reversal of transaction RCPA000002",Completed,"250.00",,"1,000.50"',
      'SMSREC0001,2024-01-05 09:00:00,"Funds received from 254733000111 - MARY W",Completed,700.00,,"1,700.50"',
    ].join('\n')
    const form = new FormData()
    form.append('file', new File([csv], 'exact.csv', { type: 'text/csv' }))
    const res = await app.handle(
      new Request('http://localhost/api/v1/statements', {
        method: 'POST',
        headers: await kit.authFor({ tenantId, role: 'Admin' }),
        body: form,
      }),
    )
    const body = (await res.json()) as { import_id: string }
    expect({ status: res.status, body }).toMatchObject({
      status: 201,
      body: {
        accepted: 3,
        duplicates: 2,
        matched: 1,
        rejected: 1,
        skipped: 1,
        errors: [{ row: 6, field: 'Receipt No.' }],
      },
    })
    await relayed(tenantId)
    const stored = (receipt: string) =>
      db.sqlite
        .query<{ id: string; user_id: string }, [string]>(
          'SELECT id, user_id FROM transactions WHERE receipt_number = ?',
        )
        .get(receipt)!
    const userId = stored('RCPA000001').user_id
    const event = (
      receipt: string,
      fields: Record<string, unknown>,
      balance: number,
      matched?: true,
    ) => ({
      transaction_id: stored(receipt).id,
      ...fields,
      receipt_number: receipt,
      balance,
      source: 'statement',
      user_id: userId,
      kind:
        receipt === 'RCPA000004'
          ? 'reversal'
          : fields.direction === 'in'
            ? 'customer_payment'
            : 'supplier_payment',
      import_id: body.import_id,
      ...(matched ? { matched } : {}),
    })
    const raw = kit.bus.published
      .slice(published)
      .filter((e) => e.type === topics.transactionsRaw)
      .flatMap((e) => (e.data as { transactions: unknown[] }).transactions)
    // Whole events, their keys in order too: what a consumer reads, byte for byte.
    expect(raw.map((t) => JSON.stringify(t))).toEqual(
      [
        event(
          'RCPA000001',
          {
            occurred_at: '2024-01-05T05:00:00.000Z',
            amount: 1000.5,
            direction: 'in',
            counterparty_name: 'JOHN DOE',
            counterparty_phone: '254712345678',
            description: 'Funds received from 0712345678 - JOHN DOE',
          },
          1000.5,
        ),
        event(
          'RCPA000002',
          {
            occurred_at: '2024-01-05T06:15:30.000Z',
            amount: 250,
            direction: 'out',
            counterparty_name: 'KPLC PREPAID',
            counterparty_phone: null,
            description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1234',
          },
          750.5,
        ),
        // The reversal names nobody: it takes the reversed row's counterparty.
        event(
          'RCPA000004',
          {
            occurred_at: '2024-01-05T08:00:00.000Z',
            amount: 250,
            direction: 'in',
            counterparty_name: 'KPLC PREPAID',
            counterparty_phone: null,
            description: 'Reversal of transaction RCPA000002',
          },
          1000.5,
        ),
        event(
          'SMSREC0001',
          {
            occurred_at: '2024-01-05T06:00:00.000Z',
            amount: 700,
            direction: 'in',
            counterparty_name: 'MARY W',
            counterparty_phone: '254733000111',
            description: 'Funds received from 254733000111 - MARY W',
          },
          1700.5,
          true,
        ),
      ].map((t) => JSON.stringify(t)),
    )
  })
})
