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

    applyMigrations(db, migrations.slice(0, lean + 1))
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

  it('key the daily counterparty rollup direction first, its covering index gone, every row kept', () => {
    const db = new Database(':memory:')
    const keyed = migrations.findIndex((m) => m.tag === '0008_lean_daily_counterparties')
    applyMigrations(db, migrations.slice(0, keyed))
    const cp = (day: string, key: string, direction: string, cents: number) =>
      db.run(`INSERT INTO daily_counterparties VALUES ('t', '${day}', '${key}', '${direction}', 1,
        ${cents}, '${day}T08:00:00.000Z')`)
    cp('2026-01-02', 'tel:254700000001', 'out', 200)
    cp('2026-01-01', 'tel:254700000002', 'in', 300)
    cp('2026-01-01', 'tel:254700000001', 'in', 400)
    const all = 'SELECT * FROM daily_counterparties ORDER BY day, counterparty_key, direction'
    const before = db.query(all).all()

    applyMigrations(db, migrations)
    expect(db.query(all).all()).toEqual(before)
    const schema = (name: string) =>
      db.query<{ sql: string }, [string]>('SELECT sql FROM sqlite_master WHERE name = ?').get(name)
        ?.sql
    expect(schema('daily_counterparties')).toContain('WITHOUT ROWID')
    expect(schema('daily_counterparties_direction_day')).toBeUndefined()
    // What insights reads comes in key order, from the key alone.
    const plan = db
      .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN SELECT counterparty_key, amount_cents
        FROM daily_counterparties WHERE tenant_id = 't' AND direction = 'in' AND day >= '2026-01-01'`)
      .all()
      .map((r) => r.detail)
    expect(plan).toEqual([
      'SEARCH daily_counterparties USING PRIMARY KEY (tenant_id=? AND direction=? AND day>?)',
    ])
    expect(() => cp('2026-01-01', 'tel:254700000001', 'in', 1)).toThrow()
  })
})

describe('analytics migration 0009_kinds', () => {
  it('gives rows from before kinds a payment kind by direction, splitting each day in and out', () => {
    const db = new Database(':memory:')
    const kinds = migrations.findIndex((m) => m.tag === '0009_kinds')
    applyMigrations(db, migrations.slice(0, kinds))
    db.run(`INSERT INTO transactions (tenant_id, id, occurred_at, local_day, amount_cents, direction,
      description, source, updated_at) VALUES
      ('t', 'a', '2026-01-01T08:00:00.000Z', '2026-01-01', 300, 'in', 'x', 'api', ''),
      ('t', 'b', '2026-01-01T09:00:00.000Z', '2026-01-01', 200, 'out', 'x', 'api', '')`)
    db.run(`INSERT INTO daily_totals VALUES ('t', '2026-01-01', '', 'in', 'Revenue', 1, 300),
      ('t', '2026-01-01', '', 'out', 'Rent', 1, 200)`)
    db.run(`INSERT INTO daily_summaries VALUES ('t', '2026-01-01', '', 1, 300, 1, 200)`)

    applyMigrations(db, migrations.slice(0, kinds + 1))
    expect(db.query('SELECT id, kind, leg FROM transactions ORDER BY id').all()).toEqual([
      { id: 'a', kind: 'customer_payment', leg: '' },
      { id: 'b', kind: 'supplier_payment', leg: '' },
    ])
    expect(
      db
        .query(
          'SELECT kind, in_count, in_cents, out_count, out_cents FROM daily_summaries ORDER BY kind',
        )
        .all(),
    ).toEqual([
      { kind: 'customer_payment', in_count: 1, in_cents: 300, out_count: 0, out_cents: 0 },
      { kind: 'supplier_payment', in_count: 0, in_cents: 0, out_count: 1, out_cents: 200 },
    ])
    expect(db.query('SELECT category, kind FROM daily_totals ORDER BY category').all()).toEqual([
      { category: 'Rent', kind: 'supplier_payment' },
      { category: 'Revenue', kind: 'customer_payment' },
    ])
    const schema = (name: string) =>
      db.query<{ sql: string }, [string]>('SELECT sql FROM sqlite_master WHERE name = ?').get(name)
        ?.sql
    for (const t of ['daily_totals', 'daily_summaries'])
      expect(schema(t)).toContain('WITHOUT ROWID')
  })
})
