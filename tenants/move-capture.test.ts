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
    expect([...captured.keys.keys()].sort()).toEqual(tables.map((t) => t.name).sort())
    for (const keys of captured.keys.values()) expect(keys).toHaveLength(1)
    expect(captured.count).toBe(TABLES)
    db.close()
  })

  it('reads each logged key once, and from a position on only what came after it', async () => {
    const db = database()
    const tables = tablesOf(db.sqlite)
    await startCapture(db, 'acme', tables)
    const write = (sql: string) => db.write(() => db.sqlite.run(sql))
    write("INSERT INTO t0 (id, tenant_id, v) VALUES ('a', 'acme', 1)")
    write("UPDATE t0 SET v = 2 WHERE id = 'a'")
    const first = readCapture(db, 'acme', tables)
    expect(first.count).toBe(1)
    expect(first.keys.get('t0')).toHaveLength(1)
    write("INSERT INTO t1 (id, tenant_id, v) VALUES ('b', 'acme', 1)")
    const next = readCapture(db, 'acme', tables, first.last)
    expect([...next.keys.keys()]).toEqual(['t1'])
    expect(next.count).toBe(1)
    expect(readCapture(db, 'acme', tables, next.last).count).toBe(0)
    db.close()
  })
})
