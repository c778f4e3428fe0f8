import { describe, expect, it } from 'bun:test'
import { getTableColumns, getTableName } from 'drizzle-orm'
import { migrations } from '../../schema/payment/migrations.ts'
import * as tables from '../../schema/payment/tables.ts'
import { createTestKit } from '../kernel/testing.ts'
import { getPayment, type PaymentRow } from './rows.ts'
import { insertValues } from './sql-row.ts'

/**
 * Row types come from the drizzle tables (`$inferSelect`): the property names are the keys, so a
 * renamed column fails to compile where a row is read; hand-written SQL reads and writes whole rows
 * under the table's SQL names (selectAll, insertValues); and the tables match the databases the
 * migrations build, so the SQL reads what the types say.
 */
describe('row types from the payment tables', () => {
  it('key rows by property name, typed by the column', () => {
    const row = { tenantId: 't', amountCents: 100, status: 'pending' } as Pick<
      PaymentRow,
      'tenantId' | 'amountCents' | 'status'
    >
    // @ts-expect-error the SQL name is not the property name
    row.tenant_id
    // @ts-expect-error a status the payment state machine does not have
    const wrong: PaymentRow['status'] = 'paid'
    const nullable: PaymentRow['resultDesc'] = null
    expect([row.tenantId, wrong, nullable]).toEqual(['t', 'paid', null])
  })

  it('write and read back a whole row under the SQL names', async () => {
    const kit = await createTestKit('payment', { migrations })
    try {
      const db = kit.ctx.registry.tenant('payment', 'acme')
      const at = '2026-11-27T10:00:00.000Z'
      const row: PaymentRow = {
        id: 'pay_rt',
        tenantId: 'acme',
        checkoutRequestId: 'ws_CO_rt',
        merchantRequestId: 'm-rt',
        phoneNumber: '254700000001',
        amountCents: 12_345,
        accountReference: 'INV-1',
        transactionDesc: 'Order',
        status: 'success',
        resultCode: 0,
        resultDesc: 'ok',
        mpesaReceiptNumber: 'TST000RT01',
        transactionDate: at,
        counterpartyName: null,
        callbackBody: null,
        callbackAt: null,
        userId: 'usr_1',
        transactionId: 'txn_rt',
        purpose: null,
        owner: null,
        createdAt: at,
        updatedAt: at,
      }
      expect(db.write(() => insertValues(db, tables.payments, row))).toBe(true)
      expect(getPayment(db, 'acme', 'pay_rt')).toEqual(row)
      // OR IGNORE skips the row the unique provider id refuses, not only a repeated key.
      const again = { ...row, id: 'pay_rt2' }
      expect(db.write(() => insertValues(db, tables.payments, again, { orIgnore: true }))).toBe(
        false,
      )
    } finally {
      kit.cleanup()
    }
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
