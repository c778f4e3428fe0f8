import { describe, expect, it } from 'bun:test'
import { openDatabase } from './db.ts'
import { readCapture, startCapture } from './move-capture.ts'
import { tablesOf } from './move-tables.ts'

const TABLES = 12

/** An in-memory database with a dozen tenant tables, as a service with many tables has. */
function database() {
  const sql = Array.from(
    { length: TABLES },
    (_, i) => `CREATE TABLE t${i} (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, v INTEGER)`,
  ).join('\n--> statement-breakpoint\n')
  return openDatabase(':memory:', { migrations: [{ tag: '0001_tables', sql }] })
}

describe('change capture of a tenant move', () => {
  it('lets the event loop turn between the tables it starts logging, and logs every table once done', async () => {
    const db = database()
    const tables = tablesOf(db.sqlite)
    let turns = 0
    let done = false
    const spin = () => {
      turns++
      if (!done) setImmediate(spin)
    }
    setImmediate(spin)
    const started = startCapture(db, 'acme', tables)
    const before = turns
    await started
    done = true
    // Each table's triggers are made in a turn of their own; at once, nothing else would run.
    expect(turns - before).toBeGreaterThanOrEqual(TABLES)
    db.write(() => {
      for (const t of tables) {
        db.sqlite.run(`INSERT INTO ${t.name} (id, tenant_id, v) VALUES ('a', 'acme', 1)`)
        db.sqlite.run(`INSERT INTO ${t.name} (id, tenant_id, v) VALUES ('b', 'other', 1)`)
      }
    })
    const captured = readCapture(db, 'acme', tables)
    expect([...captured.keys()].sort()).toEqual(tables.map((t) => t.name).sort())
    for (const keys of captured.values()) expect(keys).toHaveLength(1)
    db.close()
  })
})
