import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { settleOutbox } from './restore.ts'

describe('the outbox of a restored database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-restore-outbox-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('is sent up to the backup point, before the replay window, and unsent after it', () => {
    const path = join(dir, 'payment.db')
    const db = new Database(path)
    db.run(
      'CREATE TABLE outbox (seq INTEGER PRIMARY KEY, id TEXT, topic TEXT, tenant_id TEXT, payload TEXT, created_at TEXT, sent_at TEXT)',
    )
    const row = db.query('INSERT INTO outbox (id, created_at, sent_at) VALUES (?, ?, ?)')
    row.run('old_sent', '2026-01-05T09:00:00.000Z', '2026-01-05T09:00:00.100Z')
    row.run('recent_sent', '2026-01-05T09:59:59.000Z', '2026-01-05T09:59:59.100Z')
    row.run('unsent_before', '2026-01-05T09:59:59.500Z', null)
    row.run('during', '2026-01-05T10:00:00.500Z', '2026-01-05T10:00:00.600Z')
    db.close()

    const resent = settleOutbox(path, '2026-01-05T10:00:00.000Z', 60)
    expect(resent).toBe(1)
    const after = new Database(path, { readonly: true })
    const sent = Object.fromEntries(
      after
        .query<{ id: string; sent_at: string | null }, []>('SELECT id, sent_at FROM outbox')
        .all()
        .map((r) => [r.id, r.sent_at]),
    )
    after.close()
    // Out of a start-up replay's reach (it republishes what was sent within its window of now).
    expect(sent.old_sent).toBe('2026-01-05T09:00:00.100Z')
    expect(sent.recent_sent).toBe('2026-01-05T09:58:59.000Z')
    expect(sent.unsent_before).toBe('2026-01-05T09:58:59.000Z')
    expect(sent.during).toBeNull()
  })
})
