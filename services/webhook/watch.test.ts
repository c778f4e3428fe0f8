import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { watchOtherWriters } from './watch.ts'

describe('watching for other writers', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('tells of commits made through another connection, not of its own', async () => {
    const file = join(kit.dataDir, 'watched.db')
    const own = openDatabase(file, { migrations })
    const other = openDatabase(file, { migrations })
    const insert = (db: typeof own, id: string) =>
      db.write(() =>
        db.sqlite
          .query(
            `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
             VALUES (?, 't', 'https://example.com/', '[]', 'x', 'enabled', 'x', 'x')`,
          )
          .run(id),
      )
    const seen: number[] = []
    let looks = 0
    const timer = watchOtherWriters(own, 5, () => seen.push(looks))
    // Counts the watcher's looks through the same connection: each reads data_version.
    const query = own.sqlite.query.bind(own.sqlite)
    own.sqlite.query = ((sql: string) => {
      if (sql === 'PRAGMA data_version') looks++
      return query(sql)
    }) as typeof own.sqlite.query
    await eventually(() => looks >= 2)
    insert(own, 'whe_own')
    const after = looks
    await eventually(() => looks >= after + 3)
    expect(seen).toEqual([])
    insert(other, 'whe_other')
    await eventually(() => seen.length === 1)
    clearInterval(timer)
    own.close()
    other.close()
  })
})
