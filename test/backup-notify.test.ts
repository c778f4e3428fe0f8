import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

/**
 * The notification drill: payments go on while a backup is taken, more follow it, then the
 * backup is restored and started. The receiver deduplicates as Standard Webhooks advises, by
 * `webhook-id`; it must never see one payment under two ids, nor one payment with two
 * `transaction_id`s, however often the restored platform repeats it.
 */
const root = join(import.meta.dir, '..')
const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'

async function mmp(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, MMP_LOG_FORMAT: 'json', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

/** Per payment (its order, unique here): the webhook-ids and transaction_ids it was notified under. */
function tally(hits: ReturnType<typeof startWebhookReceiver>['hits']) {
  const byPayment = new Map<string, { ids: Set<string>; transactions: Set<string>; n: number }>()
  for (const h of hits) {
    if (h.body?.type !== 'payment.success') continue
    const key = String(h.body.data.account_reference)
    const t = byPayment.get(key) ?? { ids: new Set(), transactions: new Set(), n: 0 }
    t.ids.add(h.id)
    t.transactions.add(String(h.body.data.transaction_id))
    t.n++
    byPayment.set(key, t)
  }
  return byPayment
}

describe('notifications across a backup and restore', () => {
  let a: TestPlatform
  let b: TestPlatform | null = null
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-backup-notify-'))
  const receiver = startWebhookReceiver(SECRET)
  let admin: ReturnType<typeof api>
  const pushed: string[] = []

  const push = async (client: ReturnType<typeof api>, n: number) => {
    const r = await client.post('/api/v1/payments/stkpush', {
      phone_number: `254712${106_000 + n}`,
      amount: 100 + n,
      account_reference: `ORDER-${n}`,
      transaction_desc: 'Sugar 2kg',
    })
    if (r.status === 202) pushed.push(`ORDER-${n}`)
  }

  beforeAll(async () => {
    a = await startTestPlatform()
    admin = await createTenantAdmin(a, { id: 'kiosk', plan: 'pro' })
    const hook = await admin.post('/api/v1/webhooks', {
      url: `${receiver.url}/kiosk`,
      events: ['payment.success'],
      secret: SECRET,
    })
    expect(hook.status).toBe(201)
  }, 60_000)

  afterAll(async () => {
    await b?.dispose()
    await a?.dispose()
    receiver.stop()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('never notifies one payment under two webhook-ids or two transaction_ids', async () => {
    let n = 0
    for (; n < 10; n++) await push(admin, n)
    // Payments keep coming while the backup is taken: some are pending in the copy, settled
    // and notified by the old platform afterwards.
    let writing = true
    const writer = (async () => {
      while (writing) await push(admin, n++)
    })()
    const backup = await mmp(['backup', '--to', join(scratch, 'backup'), '--json'], {
      MMP_DATA_DIR: a.dataDir,
    })
    writing = false
    await writer
    expect(backup.code).toBe(0)
    for (let i = 0; i < 5; i++) await push(admin, n++)
    await eventually(
      () => {
        return tally(receiver.hits).size === pushed.length
      },
      30_000,
      `every payment notified by the old platform (${pushed.length} pushed)`,
    )
    const before = receiver.hits.length
    await a.stop()

    const restored = join(scratch, 'restored')
    const r = await mmp(['restore', '--from', join(scratch, 'backup'), '--data-dir', restored])
    expect(r.code).toBe(0)
    // The restored platform asks the provider about what it holds pending at once.
    b = await startTestPlatform({ dataDir: restored, env: { MMP_RECONCILE_AFTER: '1' } })
    const owner = api(b.gateway, await b.login('owner@kiosk.test', 'kiosk-Owner-Passphrase-42'))
    // What the copy holds pending and the provider settled is settled again here: the operator's
    // reconciliation asks the provider about each, and answers once it has.
    const reconciled = await api(b.gateway, await b.login()).post('/api/v1/payments/reconcile')
    expect(reconciled.status).toBe(200)
    await eventually(
      async () => {
        const d = await owner.get('/api/v1/webhooks/deliveries?status=pending')
        return d.status === 200 && (d.body?.data ?? []).length === 0
      },
      30_000,
      'the restored platform delivers what it queued',
    )

    const repeats = receiver.hits.length - before
    const twice = [...tally(receiver.hits)].filter(
      ([, t]) => t.ids.size > 1 || t.transactions.size > 1,
    )
    console.log(
      `${pushed.length} payments, ${before} notifications before the restore, ${repeats} after; ${twice.length} under a second id`,
    )
    expect(
      twice.map(([checkout, t]) => ({ checkout, ids: [...t.ids], txns: [...t.transactions] })),
    ).toEqual([])
    expect(receiver.hits.every((h) => h.verified)).toBe(true)
  }, 150_000)
})
