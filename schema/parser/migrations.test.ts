import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { applyMigrations } from '../../tenants/db.ts'
import { migrations } from './migrations.ts'

describe('parser migrations', () => {
  it('move the transactions WITHOUT ROWID with every row, a receipt and its leg unique per tenant', () => {
    const db = new Database(':memory:')
    const lean = migrations.findIndex((m) => m.tag === '0004_lean_transactions')
    applyMigrations(db, migrations.slice(0, lean))
    const row = (id: string, receipt: string) =>
      db.run(
        `INSERT INTO transactions VALUES ('t', ?, ?, '2026-01-01T00:00:00.000Z', 100, 'in', 'Ann',
          '254700000001', 'Funds received', 1000, 'statement', 'usr_1', 'imp_1', '2026-01-01')`,
        [id, receipt],
      )
    row('txn_1', 'RA1')
    row('txn_2', 'RA2')
    const before = db.query('SELECT * FROM transactions ORDER BY id').all()

    applyMigrations(db, migrations)
    // Every row kept, as the movement itself ('' leg) of its receipt, its kind unknown (0005).
    expect(db.query('SELECT * FROM transactions ORDER BY id').all()).toEqual(
      before.map((r) => ({ ...(r as object), leg: '', kind: null })),
    )
    const sql = (name: string) =>
      db.query<{ sql: string }, [string]>('SELECT sql FROM sqlite_master WHERE name = ?').get(name)
        ?.sql
    expect(sql('transactions')).toContain('WITHOUT ROWID')
    expect(sql('transactions_tenant_time')).toBeUndefined()
    expect(() => row('txn_3', 'RA1')).toThrow()
    expect(() => row('txn_1', 'RA3')).toThrow()
    // A second leg of a stored receipt is a row of its own (DESIGN §16 "Legs").
    db.run(
      `INSERT INTO transactions (tenant_id, id, receipt_number, occurred_at, amount, direction,
        description, source, created_at, leg, kind) VALUES ('t', 'txn_4', 'RA1',
        '2026-01-01T00:00:00.000Z', 10, 'out', 'Pay Bill Charge', 'statement', '2026-01-01',
        'charge', 'charge')`,
    )
    expect(
      db.query("SELECT count(*) AS n FROM transactions WHERE receipt_number = 'RA1'").get(),
    ).toEqual({ n: 2 })
  })
})
