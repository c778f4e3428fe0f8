import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { storageError } from '../services/kernel/problem.ts'
import { openDatabase } from './db.ts'
import { dropFences, FENCE_S, FENCED, fenceTenant } from './move-fence.ts'
import { tablesOf } from './move-tables.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function database() {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-fence-'))
  dirs.push(dir)
  return openDatabase(join(dir, 'x.db'), {
    migrations: [
      {
        tag: '0001_rows',
        sql: 'CREATE TABLE rows (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, v INTEGER NOT NULL)',
      },
    ],
  })
}

describe('move fences', () => {
  it('refuse inserts and updates of the moved tenant only, and let deletes through', () => {
    const db = database()
    db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('acme', 1), ('other', 1)")
    db.write(() => fenceTenant({ db, tenantId: 'acme', tables: tablesOf(db.sqlite) }))
    const insert = () => db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('acme', 2)")
    const update = () => db.sqlite.run("UPDATE rows SET v = 3 WHERE tenant_id = 'acme'")
    for (const write of [insert, update]) {
      let message = ''
      try {
        write()
      } catch (err) {
        message = (err as Error).message
      }
      expect(message).toMatch(FENCED)
    }
    db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('other', 2)")
    db.sqlite.run("DELETE FROM rows WHERE tenant_id = 'acme'")
    expect(db.sqlite.query('SELECT count(*) AS n FROM rows').get()).toEqual({ n: 2 })
  })

  it('run out after FENCE_S and are dropped by the next move that touches the file', () => {
    const db = database()
    const long_ago = Date.now() - (FENCE_S + 1) * 1000
    db.write(() =>
      fenceTenant({ db, tenantId: 'acme', tables: tablesOf(db.sqlite), now: long_ago }),
    )
    db.write(() => fenceTenant({ db, tenantId: 'kilo', tables: tablesOf(db.sqlite) }))
    // Inert once run out, before anyone drops it.
    db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('acme', 1)")
    expect(db.write(() => dropFences(db, null))).toBe(2)
    expect(() => db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('kilo', 1)")).toThrow(
      FENCED,
    )
    expect(db.write(() => dropFences(db, 'kilo'))).toBe(2)
    db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('kilo', 1)")
  })
})

describe('a fenced write', () => {
  it('is answered 503 with Retry-After, so the client retries against the new placement', () => {
    const db = database()
    db.write(() => fenceTenant({ db, tenantId: 'acme', tables: tablesOf(db.sqlite) }))
    let caught: unknown
    try {
      db.write(() => db.sqlite.run("INSERT INTO rows (tenant_id, v) VALUES ('acme', 1)"))
    } catch (err) {
      caught = err
    }
    const answer = storageError(caught)
    expect(answer).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE' })
    expect(answer?.headers).toMatchObject({ 'Retry-After': '1' })
  })
})
