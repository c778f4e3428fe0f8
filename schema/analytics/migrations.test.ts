import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { applyMigrations } from '../../tenants/db.ts'
import { migrations } from './migrations.ts'

const KEYED = [
  'counterparties',
  'daily_counterparties',
  'daily_totals',
  'daily_summaries',
  'receipt_reports',
]

describe('analytics migrations', () => {
  it('rebuild the rollups and receipt reports WITHOUT ROWID keeping every row and index', () => {
    const db = new Database(':memory:')
    const lean = migrations.findIndex((m) => m.tag === '0007_lean_rollups')
    applyMigrations(db, migrations.slice(0, lean))
    db.run(`INSERT INTO counterparties VALUES ('t', 'tel:254700000001', 'Ann', '254700000001', 2,
      500, 300, 200, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z')`)
    db.run(`INSERT INTO daily_counterparties VALUES ('t', '2026-01-01', 'tel:254700000001', 'in', 1,
      300, '2026-01-01T00:00:00.000Z')`)
    db.run(`INSERT INTO daily_totals VALUES ('t', '2026-01-01', '', 'in', 'Revenue', 1, 300)`)
    db.run(`INSERT INTO daily_summaries VALUES ('t', '2026-01-01', '', 1, 300, 0, 0)`)
    db.run(`INSERT INTO receipt_reports VALUES ('t', 'RA1', 'statement', NULL, 'txn_1',
      '2026-01-01T00:00:00.000Z', 300, 'in', 1000, 'imp_1')`)
    const before = KEYED.map((t) => db.query(`SELECT * FROM ${t}`).all())

    applyMigrations(db, migrations)
    expect(KEYED.map((t) => db.query(`SELECT * FROM ${t}`).all())).toEqual(before)
    const schema = (name: string) =>
      db.query<{ sql: string }, [string]>('SELECT sql FROM sqlite_master WHERE name = ?').get(name)
        ?.sql
    for (const t of KEYED) expect(schema(t)).toContain('WITHOUT ROWID')
    expect(schema('counterparties_total')).toBeUndefined()
    expect(schema('daily_counterparties_direction_day')).toContain('amount_cents')
    expect(schema('receipt_reports_time')).toContain('occurred_at')
    // The key still refuses a second row, which the upserts rely on.
    expect(() =>
      db.run(`INSERT INTO daily_totals VALUES ('t', '2026-01-01', '', 'in', 'Revenue', 1, 1)`),
    ).toThrow()
  })
})
