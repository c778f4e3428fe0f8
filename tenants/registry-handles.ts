import type { Db, Migration } from './db.ts'
import { openDatabase } from './db.ts'

/** What the handles of a registry are opened with (`RegistryOptions` of tenants/registry.ts). */
export interface HandleOptions {
  /** Migrations of each service's databases. */
  migrations: (service: string) => readonly Migration[]
  /** `FULL` for money (payment, billing), `NORMAL` elsewhere. */
  synchronous?: (service: string) => 'FULL' | 'NORMAL'
  /**
   * Open handles kept at most, for the whole process (every service shares this registry): beyond
   * it the least recently used handle that is not busy is released and its descriptors freed.
   * Platform databases are never released (services hold statements on them for life).
   */
  maxOpen?: number
  /** Told once when every open handle is busy and the cap cannot be kept. */
  onOverCap?: (open: number, max: number) => void
  /** Called once for every database the first time it is opened (the relay watches it). */
  onOpen?: (
    db: Db,
    info: { service: string; tenantId: string | null; firstInProcess: boolean },
  ) => void
}

/**
 * The open database handles of a registry (tenants/registry.ts): a bounded LRU, least recently
 * used first, whose idle handles are released past `maxOpen`. Platform databases are pinned.
 */
export function createHandles(opts: HandleOptions) {
  const max = opts.maxOpen ?? 256
  /** Open handles, least recently used first (a path may have two: see `openPath`). */
  const lru = new Map<Db, string>()
  /** The handle `openPath` gives out for a path. */
  const current = new Map<string, Db>()
  const pinned = new Set<string>()
  /** Files closed before deletion: a released handle of one must not recreate it. */
  const erased = new Set<string>()
  const seen = new Set<string>()
  let warnedOverCap = false

  /**
   * Releases `db` and every other handle of its file, or none when one of them is busy or is
   * `keep`: SQLite keeps the descriptor of a connection closed while another connection of the
   * process holds the same file until they have all closed, so closing one of two would leave a
   * descriptor outside the cap. How many handles it released.
   */
  const releaseFile = (db: Db, path: string, keep: Db | null): number => {
    const all = [...lru].filter(([d, p]) => p === path && !d.gone && d !== db).map(([d]) => d)
    if (all.some((d) => d === keep || d.busy)) return 0
    if (!db.release()) return 0
    all.push(db)
    let n = 0
    for (const d of all) {
      if (d !== db && !d.release() && !d.closed) continue
      lru.delete(d)
      if (current.get(path) === d) current.delete(path)
      n++
    }
    return n
  }

  /** Releases least recently used handles that are not busy until the cap holds. */
  const evict = (keep: Db | null, room = 0) => {
    const limit = max - room
    if (lru.size <= limit) return
    for (const [db, path] of lru) {
      if (lru.size <= limit) break
      if (db.gone) lru.delete(db)
      else if (db === keep || pinned.has(path) || db.busy) continue
      else releaseFile(db, path, keep)
    }
    if (lru.size > limit && !warnedOverCap) {
      warnedOverCap = true
      opts.onOverCap?.(lru.size, max)
    }
  }

  /** Releases the files of up to `n` idle handles, oldest first; whether any was released. */
  const shrink = (n: number): boolean => {
    let released = 0
    for (const [db, path] of lru) {
      if (released >= n) break
      if (pinned.has(path) || db.busy) continue
      released += releaseFile(db, path, null)
    }
    return released > 0
  }

  const touch = (db: Db, path: string) => {
    lru.delete(db)
    lru.set(db, path)
  }

  const openFile = (service: string, path: string) =>
    openDatabase(path, {
      migrations: opts.migrations(service),
      synchronous: opts.synchronous?.(service) ?? 'NORMAL',
      mayReopen: () => {
        evict(null, 1)
        return !erased.has(path)
      },
      onReopen(reopened) {
        touch(reopened, path)
        evict(reopened)
      },
    })

  /**
   * A released handle is never given out again: services cache prepared statements per `Db`
   * (WeakMap), and those died with the release. Code that still holds the old one reopens it on
   * use; it then counts in the LRU again beside the new one.
   */
  const openPath = (service: string, path: string, tenantId: string | null, pin = false): Db => {
    if (pin) pinned.add(path)
    const hit = current.get(path)
    if (hit && !hit.closed) {
      touch(hit, path)
      return hit
    }
    erased.delete(path)
    // Room first, then the open: the descriptors never exceed the cap, even for a moment.
    evict(null, 1)
    let db: Db
    try {
      db = openFile(service, path)
    } catch (err) {
      // Out of descriptors (other files, sockets): give back half the idle handles and try once more.
      if (!/unable to open/i.test((err as Error)?.message ?? '') || !shrink(lru.size >> 1))
        throw err
      db = openFile(service, path)
    }
    current.set(path, db)
    touch(db, path)
    const firstInProcess = !seen.has(path)
    seen.add(path)
    opts.onOpen?.(db, { service, tenantId, firstInProcess })
    evict(db)
    return db
  }

  return {
    openPath,
    /** Closes the open handle of one file, if any (before its file is deleted). */
    closePath(path: string) {
      erased.add(path)
      current.delete(path)
      for (const [db, p] of lru) {
        if (p !== path) continue
        lru.delete(db)
        db.close()
      }
    },
    closeAll() {
      for (const db of lru.keys()) db.close()
      lru.clear()
      current.clear()
    },
    openCount: () => lru.size,
    shed: () => shrink(Math.max(1, lru.size >> 1)),
  }
}
