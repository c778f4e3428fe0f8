import { describe, expect, it } from 'bun:test'
import { integer, SQLiteSyncDialect, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { columnOf, excluded, selectList, sqlNames } from './columns.ts'

const things = sqliteTable('things', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  nextAttemptAt: integer('next_attempt_at'),
})

describe('selectList', () => {
  it('names each column as the table does, aliased to its property name', () => {
    expect(selectList(things, ['id', 'tenantId', 'nextAttemptAt'])).toBe(
      'id, tenant_id AS tenantId, next_attempt_at AS nextAttemptAt',
    )
    expect(columnOf(things, 'tenantId')).toBe('tenant_id')
  })

  it('refuses at compile time a column the table does not have', () => {
    // @ts-expect-error: not a column of things
    expect(() => selectList(things, ['tenant'])).toThrow()
  })
})

describe('sqlNames', () => {
  it('names the table under $ and each column by its property', () => {
    const t = sqlNames(things)
    expect(t.$).toBe('things')
    expect(t.tenantId).toBe('tenant_id')
    expect(t.nextAttemptAt).toBe('next_attempt_at')
    // @ts-expect-error: not a column of things
    expect(t.tenant).toBeUndefined()
  })
})

describe('excluded', () => {
  it("names the column an upsert tried to insert, by the table's SQL name", () => {
    expect(new SQLiteSyncDialect().sqlToQuery(excluded(things.tenantId)).sql).toBe(
      'excluded."tenant_id"',
    )
  })
})
