import { describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../../schema/payment/migrations.ts'
import { openDatabase } from '../kernel/db.ts'
import { appendAudit, verifyAuditFile } from './audit.ts'

describe('audit chain', () => {
  it('keeps each tenant verifiable when its rows move to another file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmp-audit-'))
    try {
      const shared = openDatabase(join(dir, 'shared.db'), { migrations })
      for (let i = 0; i < 6; i++) {
        const tenantId = i % 2 ? 'beta' : 'alpha'
        shared.write(() =>
          appendAudit(shared, {
            tenantId,
            entity: 'payment',
            entityId: `pay_${i}`,
            action: 'created',
            fromStatus: null,
            toStatus: 'initiating',
            detail: { i },
            actor: null,
            at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
          }),
        )
      }
      expect(verifyAuditFile(shared.path)).toMatchObject({ ok: true, rows: 6 })
      // Move beta to its own file (what a Free → Pro upgrade does), letting seq renumber.
      const own = openDatabase(join(dir, 'own.db'), { migrations })
      const cols =
        'tenant_seq, id, tenant_id, entity, entity_id, action, from_status, to_status, detail, actor, at, prev_hash, hash'
      const rows = shared.sqlite
        .query(`SELECT ${cols} FROM audit_log WHERE tenant_id = 'beta' ORDER BY tenant_seq`)
        .values()
      own.write(() => {
        for (const r of rows)
          own.sqlite
            .query(`INSERT INTO audit_log (${cols}) VALUES (${cols.replace(/\w+/g, '?')})`)
            .run(...(r as never[]))
      })
      shared.write(() => shared.sqlite.run("DELETE FROM audit_log WHERE tenant_id = 'beta'"))
      expect(verifyAuditFile(shared.path)).toMatchObject({ ok: true, rows: 3 })
      expect(verifyAuditFile(own.path)).toMatchObject({ ok: true, rows: 3 })
      // Removing a row in the middle of a tenant's chain is caught.
      own.write(() => own.sqlite.run('DELETE FROM audit_log WHERE tenant_seq = 2'))
      const r = verifyAuditFile(own.path)
      expect(r.ok).toBe(false)
      expect(r.broken?.reason).toContain('removed')
      shared.close()
      own.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
