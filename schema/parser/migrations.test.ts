import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { applyMigrations } from '../../tenants/db.ts'
import { migrations } from './migrations.ts'

describe('parser migrations', () => {
  it('move the transactions WITHOUT ROWID with every row, the receipt still unique per tenant', () => {
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
    expect(db.query('SELECT * FROM transactions ORDER BY id').all()).toEqual(before)
    const sql = (name: string) =>
      db.query<{ sql: string }, [string]>('SELECT sql FROM sqlite_master WHERE name = ?').get(name)
        ?.sql
    expect(sql('transactions')).toContain('WITHOUT ROWID')
    expect(sql('transactions_tenant_time')).toBeUndefined()
    expect(() => row('txn_3', 'RA1')).toThrow()
    expect(() => row('txn_1', 'RA3')).toThrow()
  })
})
