import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readlinkSync } from 'node:fs'
import Papa from 'papaparse'
import { migrations } from '../../schema/analytics/migrations.ts'
import type { TransactionEvent } from '../../schema/events.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { consumeTransactions } from './consumers.ts'
import { sliceCutter, writeSlices } from './csv-slices.ts'
import { exportCsv } from './export.ts'
import type { Scope } from './summary.ts'

const ROWS = 3_100

describe('a whole-history CSV export read by worker threads', () => {
  let kit: TestKit
  let scope: Scope

  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
    scope = fill(kit)
  })
  afterAll(() => kit.cleanup())

  it('cuts slices of the asked size that cover every row once', () => {
    const cut = sliceCutter(scope.db.sqlite, 'tenant_id = ?', ['acme'], 700)
    const slices = []
    for (let s = cut(); s; s = cut()) slices.push(s)
    expect(slices).toHaveLength(5)
    expect(slices[0]!.hi).toBeNull()
    expect(slices[4]!.lo).toBeNull()
    for (let i = 1; i < slices.length; i++) expect(slices[i]!.hi).toEqual(slices[i - 1]!.lo)
  })

  it('writes byte for byte what one thread writes, whatever the slice size', async () => {
    const oneThread = await new Response(exportCsv(scope, {}, { sliceRows: ROWS + 1 })).text()
    expect(oneThread.split('\r\n')).toHaveLength(ROWS + 2)
    for (const sliceRows of [700, 1000, 2999])
      expect(await new Response(exportCsv(scope, {}, { sliceRows })).text()).toBe(oneThread)
    // Two at once: one on the worker threads, the other here.
    const both = [700, 900].map((sliceRows) => new Response(exportCsv(scope, {}, { sliceRows })))
    expect(await Promise.all(both.map((r) => r.text()))).toEqual([oneThread, oneThread])
    const parsed = Papa.parse<Record<string, string>>(oneThread, {
      header: true,
      skipEmptyLines: true,
    })
    expect(parsed.errors).toEqual([])
    expect(parsed.data.map((r) => r.id)).toEqual(
      scope.db.sqlite
        .query<{ id: string }, [string]>(
          'SELECT id FROM transactions WHERE tenant_id = ? ORDER BY occurred_at DESC, id DESC',
        )
        .all('acme')
        .map((r) => r.id),
    )
  })

  it('answers a filtered export from this thread with only the matching rows', async () => {
    const text = await new Response(
      exportCsv(scope, { direction: 'out' }, { sliceRows: 700 }),
    ).text()
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true })
    expect(parsed.data).toHaveLength(ROWS / 4 + (ROWS % 4 ? 1 : 0))
    expect(new Set(parsed.data.map((r) => r.direction))).toEqual(new Set(['out']))
  })

  it('gives each page buffer back once the HTTP sink has copied it', async () => {
    const handed: Uint8Array[] = []
    const copies: Uint8Array[] = []
    // What Bun.serve hands a direct stream: a sink that copies each chunk it is given.
    const controller = {
      [Symbol.toStringTag]: 'ReadableHTTPResponseSinkController',
      write: (d: Uint8Array) => {
        handed.push(d)
        copies.push(d.slice())
        return d.byteLength
      },
      close() {},
    }
    const rows = { where: 'tenant_id = ?', args: ['acme'], page: 100 }
    const cut = sliceCutter(scope.db.sqlite, rows.where, rows.args, 700)
    await writeSlices({
      controller: controller as never,
      path: scope.db.path,
      rows,
      first: cut()!,
      cut,
    })
    const oneThread = await new Response(exportCsv(scope, {}, { sliceRows: ROWS + 1 })).text()
    expect(Buffer.concat(copies).toString()).toBe(oneThread.slice(oneThread.indexOf('\r\n') + 2))
    expect(handed.length).toBeGreaterThan(5)
    expect(handed.filter((d) => d.byteLength > 0)).toEqual([])
  })

  it('sends a slow HTTP client the bytes one thread writes', async () => {
    const oneThread = await new Response(exportCsv(scope, {}, { sliceRows: ROWS + 1 })).text()
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response(exportCsv(scope, {}, { sliceRows: 700 })),
    })
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/`)
      const parts: Uint8Array[] = []
      for await (const part of res.body!) {
        parts.push(part)
        // A reader slower than the export: the sink queues and the writer waits.
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      expect(Buffer.concat(parts).toString()).toBe(oneThread)
    } finally {
      server.stop(true)
    }
  })

  it('fails the export, never hangs, when a thread cannot read its slice', async () => {
    const written: unknown[] = []
    const controller = { write: (d: unknown) => written.push(d) || 1, close() {} }
    const rows = { where: 'tenant_id = ?', args: ['acme'], page: 100 }
    await expect(
      writeSlices({
        controller: controller as never,
        path: `${scope.db.path}.missing`,
        rows,
        first: { hi: null, lo: ['2026-03-01T00:01:00.000Z', 't600'] },
        cut: () => null,
      }),
    ).rejects.toThrow(/CSV export: .*unable to open/)
    expect(written).toEqual([])
  })

  it('fails the export, never hangs, when the next slice cannot be cut', async () => {
    const real = sliceCutter(scope.db.sqlite, 'tenant_id = ?', ['acme'], 700)
    const first = real()!
    let calls = 0
    const cut = () => {
      if (++calls > 1) throw new Error('database closed')
      return real()
    }
    const controller = { write: () => 1, close() {} }
    const rows = { where: 'tenant_id = ?', args: ['acme'], page: 100 }
    const writing = writeSlices({
      controller: controller as never,
      path: scope.db.path,
      rows,
      first,
      cut,
    })
    await expect(writing).rejects.toThrow(/CSV export: database closed/)
  })

  it('keeps the tenant handle open to the end, threaded or filtered', async () => {
    for (const filters of [{}, { direction: 'in' as const }]) {
      const oneThread = await new Response(
        exportCsv(scope, filters, { sliceRows: ROWS + 1 }),
      ).text()
      const reader = exportCsv(scope, filters, { sliceRows: 700 }).getReader()
      // The header, then the first page.
      const parts = [(await reader.read()).value!, (await reader.read()).value!]
      // What the registry does to an idle handle when descriptors run short.
      expect(scope.db.release()).toBe(false)
      for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value)
      expect(Buffer.concat(parts).toString()).toBe(oneThread)
    }
  })

  // It closes the tenant's database for good, as erasing the tenant does: a kit of its own.
  it("lets an erased tenant's file go while the client waits, and fails the export", async () => {
    const own = await createTestKit('analytics', { migrations })
    try {
      const erased = fill(own)
      const reader = exportCsv(erased, {}, { sliceRows: 700 }).getReader()
      await reader.read()
      own.registry.closePath!(erased.db.path)
      // The client reads no more: the threads finish their slices and close their connections.
      await eventually(() => openFiles(erased.db.path).length === 0, 5000, 'no file left open')
      const drain = async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read());
      }
      await expect(drain()).rejects.toThrow(/CSV export: .*closed/)
    } finally {
      own.cleanup()
    }
  })
})

/** ROWS transactions of tenant acme, and 50 of another that must not appear; acme's scope. */
function fill(kit: TestKit): Scope {
  const names = ['Ann', '=HYPERLINK("x")', 'Shop, Ltd', ' lead', 'say "hi"', null]
  // Ten rows a second: slice bounds fall among rows of one instant, ordered by id.
  const list: TransactionEvent[] = Array.from({ length: ROWS }, (_, i) => ({
    transaction_id: `t${i}`,
    occurred_at: new Date(
      Date.parse('2026-03-01T00:00:00Z') + Math.floor(i / 10) * 1000,
    ).toISOString(),
    amount: (i % 977) + (i % 3) / 4,
    direction: i % 4 ? 'in' : 'out',
    counterparty_name: names[i % names.length],
    counterparty_phone: i % 5 ? `07000${i % 100}` : null,
    description: i % 7 ? `paid ${i}` : 'line\nbreak',
    receipt_number: `R${i}`,
    balance: i % 11 ? -i : null,
    source: 'statement',
    user_id: i % 2 ? 'usr_a' : null,
    category: 'Rent',
    category_confidence: i % 13 ? 0.1 + (i % 9) / 10 : undefined,
  }))
  const send = (tenantId: string, id: string, transactions: TransactionEvent[]) =>
    consumeTransactions(
      kit.ctx,
      {
        id,
        type: 'mobilemoney.transactions.categorized',
        version: 1,
        tenant_id: tenantId,
        occurred_at: '2026-03-29T12:00:00.000Z',
        data: { transactions },
      },
      { onlyNew: false },
    )
  for (let at = 0; at < ROWS; at += 1000) send('acme', `evt_${at}`, list.slice(at, at + 1000))
  // Another tenant in the same file: its rows must not appear.
  send('other', 'evt_other', list.slice(0, 50))
  return {
    db: kit.registry.tenant('analytics', 'acme'),
    tenantId: 'acme',
    userId: null,
    zone: timeZone('Africa/Nairobi'),
    range: { fromMs: null, toMs: null },
  }
}

/** This process's open descriptors on the database file and its WAL and shared-memory files. */
function openFiles(path: string): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`)
      } catch {
        return ''
      }
    })
    .filter((target) => target.startsWith(path))
}
