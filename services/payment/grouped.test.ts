import { describe, expect, it } from 'bun:test'
import { openDatabase } from '../kernel/db.ts'
import { grouped } from './grouped.ts'

describe('group commit', () => {
  it('commits writes of one turn together; a failing one rolls back alone', async () => {
    const db = openDatabase(':memory:', {
      migrations: [{ tag: 't', sql: 'CREATE TABLE t (v INTEGER PRIMARY KEY)' }],
    })
    const insert = (v: number) => () =>
      db.sqlite.query('INSERT INTO t (v) VALUES (?)').run(v).changes
    const results = await Promise.allSettled([
      grouped(db, insert(1)),
      grouped(db, insert(1)), // duplicate key: fails alone
      grouped(db, insert(2)),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(db.sqlite.query('SELECT v FROM t ORDER BY v').values()).toEqual([[1], [2]])
    expect(await grouped(db, insert(3))).toBe(1)
    db.close()
  })
})
