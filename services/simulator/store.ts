import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type AnyRecord, MAX_RECORDS } from './model.ts'

export type Kind = AnyRecord['kind']

const SCHEMA = [
  'CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, kind TEXT NOT NULL, record TEXT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS received (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, id TEXT NOT NULL, phone TEXT NOT NULL, received_at INTEGER NOT NULL)',
  'CREATE INDEX IF NOT EXISTS received_phone ON received (phone, kind)',
  'CREATE TABLE IF NOT EXISTS pending_callbacks (id TEXT PRIMARY KEY, kind TEXT NOT NULL, due_at INTEGER NOT NULL)',
  'CREATE TABLE IF NOT EXISTS c2b_urls (shortcode TEXT PRIMARY KEY, response_type TEXT NOT NULL, confirmation_url TEXT NOT NULL, validation_url TEXT NOT NULL, registered_at INTEGER NOT NULL)',
  'CREATE TABLE IF NOT EXISTS receipts (receipt TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL, amount INTEGER NOT NULL, reversed INTEGER NOT NULL DEFAULT 0)',
  'CREATE TABLE IF NOT EXISTS balances (shortcode TEXT PRIMARY KEY, cents INTEGER NOT NULL)',
  'CREATE TABLE IF NOT EXISTS originators (originator_id TEXT PRIMARY KEY, kind TEXT NOT NULL, id TEXT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS ledger (receipt TEXT PRIMARY KEY, shortcode TEXT NOT NULL, msisdn TEXT NOT NULL, bill_ref TEXT NOT NULL, amount INTEGER NOT NULL, completed_at INTEGER NOT NULL)',
  'CREATE INDEX IF NOT EXISTS ledger_time ON ledger (shortcode, completed_at)',
]

/**
 * The simulator's memory: requests it accepted (kept across restarts, like Daraja remembers
 * them), the requests it received per phone, the C2B URLs registered per shortcode, the receipts
 * and balances, and the callbacks still due. In memory only without a path.
 */
export function createStore(statePath: string | undefined) {
  if (statePath) mkdirSync(dirname(statePath), { recursive: true })
  const db = new Database(statePath ?? ':memory:', { create: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA busy_timeout = 5000')
  for (const statement of SCHEMA) db.run(statement)
  return {
    ...requestMemory(db),
    ...c2bUrlBook(db),
    ...receiptBook(db),
    ...originatorBook(db),
    close: () => db.close(),
  }
}

export type Store = ReturnType<typeof createStore>

/** The requests accepted, counted per phone, and their callbacks still due. */
function requestMemory(db: Database) {
  const save = db.query('INSERT OR REPLACE INTO requests (id, kind, record) VALUES (?, ?, ?)')
  const load = db.query<{ record: string }, [string, string]>(
    'SELECT record FROM requests WHERE id = ? AND kind = ?',
  )
  const receive = db.query(
    'INSERT INTO received (kind, id, phone, received_at) VALUES (?, ?, ?, ?)',
  )
  const due = db.query(
    'INSERT OR REPLACE INTO pending_callbacks (id, kind, due_at) VALUES (?, ?, ?)',
  )
  const doneQ = db.query('DELETE FROM pending_callbacks WHERE id = ?')
  const cache = new Map<string, AnyRecord>()
  return {
    /**
     * Records an accepted request, counts it, and (when it will be called back) its pending
     * callback, in one commit before the answer goes out: a crash after answering still calls back.
     */
    remember(id: string, rec: AnyRecord, phone: string, callbackAt: number | null) {
      cache.set(`${rec.kind}:${id}`, rec)
      if (cache.size > MAX_RECORDS) cache.delete(cache.keys().next().value as string)
      db.transaction(() => {
        save.run(id, rec.kind, JSON.stringify(rec))
        receive.run(rec.kind, id, phone, Date.now())
        if (callbackAt !== null) due.run(id, rec.kind, callbackAt)
      })()
    },
    /** Writes a record's new state (a C2B payment's validation answer, say). */
    update(id: string, rec: AnyRecord) {
      cache.set(`${rec.kind}:${id}`, rec)
      save.run(id, rec.kind, JSON.stringify(rec))
    },
    recall<K extends Kind>(kind: K, id: string): Extract<AnyRecord, { kind: K }> | undefined {
      const hit = cache.get(`${kind}:${id}`)
      if (hit) return hit as Extract<AnyRecord, { kind: K }>
      const row = load.get(id, kind)
      return row ? (JSON.parse(row.record) as Extract<AnyRecord, { kind: K }>) : undefined
    },
    done: (id: string) => doneQ.run(id),
    pending: () =>
      db
        .query<{ id: string; kind: Kind; due_at: number }, []>(
          'SELECT id, kind, due_at FROM pending_callbacks ORDER BY due_at',
        )
        .all(),
    received: (phone: string, kind: string) =>
      db
        .query<{ kind: string; id: string; phone: string; received_at: number }, [string, string]>(
          `SELECT kind, id, phone, received_at FROM received
           WHERE (?1 = '' OR phone = ?1) AND (?2 = '' OR kind = ?2) ORDER BY seq`,
        )
        .all(phone, kind),
    recent: (kind: Kind) => [...cache.values()].filter((r) => r.kind === kind).slice(-100),
  }
}

/** The confirmation and validation URLs registered per shortcode (C2B Register URL). */
function c2bUrlBook(db: Database) {
  return {
    registerUrls(urls: {
      shortcode: string
      responseType: string
      confirmationUrl: string
      validationUrl: string
    }) {
      db.query(
        'INSERT OR REPLACE INTO c2b_urls (shortcode, response_type, confirmation_url, validation_url, registered_at) VALUES (?, ?, ?, ?, ?)',
      ).run(urls.shortcode, urls.responseType, urls.confirmationUrl, urls.validationUrl, Date.now())
    },
    urlsOf: (shortcode: string) =>
      db
        .query<
          {
            response_type: 'Completed' | 'Cancelled'
            confirmation_url: string
            validation_url: string
          },
          [string]
        >(
          'SELECT response_type, confirmation_url, validation_url FROM c2b_urls WHERE shortcode = ?',
        )
        .get(shortcode),
    /** Forgets a shortcode's C2B URLs (the M-Pesa portal's URL management), so they can be registered again. */
    deleteUrls: (shortcode: string) =>
      db.query('DELETE FROM c2b_urls WHERE shortcode = ?').run(shortcode).changes === 1,
  }
}

/** Money the simulator moved: receipts it issued, shortcode balances, each shortcode's statement. */
function receiptBook(db: Database) {
  return {
    /** A receipt the simulator issued, so Transaction Status and Reversal can find it. */
    issueReceipt(receipt: string, kind: Kind, id: string, amount: number) {
      db.query(
        'INSERT OR IGNORE INTO receipts (receipt, kind, id, amount) VALUES (?, ?, ?, ?)',
      ).run(receipt, kind, id, Math.round(amount * 100))
    },
    receipt: (receipt: string) =>
      db
        .query<{ kind: Kind; id: string; amount: number; reversed: number }, [string]>(
          'SELECT kind, id, amount, reversed FROM receipts WHERE receipt = ?',
        )
        .get(receipt),
    /** Marks a receipt reversed; false when it already was. */
    reverse: (receipt: string) =>
      db.query('UPDATE receipts SET reversed = 1 WHERE receipt = ? AND reversed = 0').run(receipt)
        .changes === 1,
    /** The organisation's working account: 50,000.00 to start with, plus what customers paid. */
    balanceOf: (shortcode: string) =>
      db
        .query<{ cents: number }, [string]>('SELECT cents FROM balances WHERE shortcode = ?')
        .get(shortcode)?.cents ?? 5_000_000,
    credit(shortcode: string, cents: number) {
      db.query(
        `INSERT INTO balances (shortcode, cents) VALUES (?, 5000000 + ?)
         ON CONFLICT (shortcode) DO UPDATE SET cents = cents + excluded.cents - 5000000`,
      ).run(shortcode, cents)
    },
    /** A payment into a shortcode as its statement (and Pull Transactions) will show it. */
    book(e: LedgerEntry) {
      db.query(
        'INSERT OR IGNORE INTO ledger (receipt, shortcode, msisdn, bill_ref, amount, completed_at) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(e.receipt, e.shortcode, e.msisdn, e.billRef, e.amountCents, e.completedAt)
    },
    /** The shortcode's payments completed in [from, to] (ms), oldest first, a page at a time. */
    ledger: ({
      shortcode,
      from,
      to,
      offset,
      limit = 100,
    }: {
      shortcode: string
      from: number
      to: number
      offset: number
      limit?: number
    }) =>
      db
        .query<
          {
            receipt: string
            msisdn: string
            bill_ref: string
            amount: number
            completed_at: number
          },
          [string, number, number, number, number]
        >(
          `SELECT receipt, msisdn, bill_ref, amount, completed_at FROM ledger
           WHERE shortcode = ? AND completed_at >= ? AND completed_at <= ?
           ORDER BY completed_at, receipt LIMIT ? OFFSET ?`,
        )
        .all(shortcode, from, to, limit, offset),
  }
}

/** The OriginatorConversationIDs seen, so a repeated one is refused as Daraja does. */
function originatorBook(db: Database) {
  return {
    /**
     * Claims an OriginatorConversationID for a request; false when one was seen before (Daraja
     * refuses it as a duplicate).
     */
    claimOriginator: (originatorId: string, kind: Kind, id: string) =>
      db
        .query('INSERT OR IGNORE INTO originators (originator_id, kind, id) VALUES (?, ?, ?)')
        .run(originatorId, kind, id).changes === 1,
    /** The request an OriginatorConversationID named. */
    originator: (originatorId: string) =>
      db
        .query<{ kind: Kind; id: string }, [string]>(
          'SELECT kind, id FROM originators WHERE originator_id = ?',
        )
        .get(originatorId),
  }
}

export interface LedgerEntry {
  receipt: string
  shortcode: string
  msisdn: string
  billRef: string
  amountCents: number
  completedAt: number
}
