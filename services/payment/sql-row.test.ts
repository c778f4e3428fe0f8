import { describe, expect, it } from 'bun:test'
import { getTableColumns, getTableName } from 'drizzle-orm'
import { migrations } from '../../schema/payment/migrations.ts'
import * as tables from '../../schema/payment/tables.ts'
import { createTestKit } from '../kernel/testing.ts'
import type { PaymentRow } from './rows.ts'

/**
 * Row types come from the drizzle tables (sql-row.ts): the SQL column names are the keys, so a
 * renamed column fails to compile where a row is read; and the tables match the databases the
 * migrations build, so the raw SQL reads what the types say.
 */
describe('row types from the payment tables', () => {
  it('key rows by SQL column name, typed by the column', () => {
    const row = { tenant_id: 't', amount_cents: 100, status: 'pending' } as Pick<
      PaymentRow,
      'tenant_id' | 'amount_cents' | 'status'
    >
    // @ts-expect-error the property name is not the column name
    row.tenantId
    // @ts-expect-error a status the payment state machine does not have
    const wrong: PaymentRow['status'] = 'paid'
    const nullable: PaymentRow['result_desc'] = null
    expect([row.tenant_id, wrong, nullable]).toEqual(['t', 'paid', null])
  })

  it('have every column the migrations create, and no other', async () => {
    const kit = await createTestKit('payment', { migrations })
    try {
      const dbs = [kit.ctx.registry.platform('payment'), kit.ctx.registry.tenant('payment', 'acme')]
      const declared = Object.values(tables).filter(
        (t) => typeof t === 'object' && t !== null && Symbol.for('drizzle:IsDrizzleTable') in t,
      ) as Array<Parameters<typeof getTableName>[0]>
      expect(declared.length).toBeGreaterThan(8)
      for (const table of declared) {
        const name = getTableName(table)
        const columns = Object.values(getTableColumns(table)).map((c) => c.name)
        const db = dbs.find((d) =>
          d.sqlite.query('SELECT 1 FROM sqlite_master WHERE name = ?').get(name),
        )
        expect(db, name).toBeDefined()
        const actual = db!.sqlite
          .query<{ name: string }, []>(`PRAGMA table_info(${name})`)
          .all()
          .map((c) => c.name)
        expect(actual.sort(), name).toEqual(columns.sort())
      }
    } finally {
      kit.cleanup()
    }
  })
})
