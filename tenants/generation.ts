import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A counter every process of one data dir shares, bumped whenever a tenant's profile or
 * entitlements change (`<data_dir>/run/profiles.gen`, memory-mapped). Caches of profiles keep the
 * counter they were read at and are exact while it stands: reading it costs nanoseconds, where a
 * stat of the profile file per request cost microseconds and a time-to-live left workers and
 * `--only` processes acting on an old placement (writing into a database the tenant had left).
 *
 * @example
 * const gen = profileGeneration(dataDir)
 * const at = gen.profiles.read()   // before reading the files it guards
 * gen.profiles.bump()              // after writing them
 */
export interface Counter {
  read(): number
  bump(): void
  /**
   * Whether a cache entry stamped with `stamp()` still holds: the counter stands and the entry is
   * younger than the safety net for hand edits (30 s; 1 s where the counter is this process's own).
   */
  fresh<E extends Stamp>(entry: E | undefined, now: number): entry is E
  /** The stamp of an entry read now; take it before reading the files the counter guards. */
  stamp(now: number): Stamp
}

export interface Stamp {
  gen: number
  at: number
}

export interface ProfileGeneration {
  /** Placements and existence (written by the tenant service). */
  profiles: Counter
  /** Entitlements (written by billing, far more often: its own counter, so placements stay cached). */
  entitlements: Counter
}

function counter(read: () => number, bump: () => void, trustMs: number): Counter {
  return {
    read,
    bump,
    fresh: <E extends Stamp>(entry: E | undefined, now: number): entry is E =>
      entry !== undefined && entry.gen === read() && now - entry.at < trustMs,
    stamp: (now) => ({ gen: read(), at: now }),
  }
}

/** Where the shared counter lives under a data dir (not backed up: `run/` is per install). */
export const generationFile = (dataDir: string) => join(dataDir, 'run', 'profiles.gen')

export function profileGeneration(dataDir: string): ProfileGeneration {
  const file = generationFile(dataDir)
  try {
    mkdirSync(join(dataDir, 'run'), { recursive: true })
    // Created once, by whichever process comes first; the others find it whole (8 bytes).
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, new Uint8Array(8))
      closeSync(fd)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    if (statSync(file).size < 8) throw new Error(`${file} is shorter than 8 bytes`)
    const mapped = Bun.mmap(file)
    const counters = new Int32Array(mapped.buffer, mapped.byteOffset, 2)
    const slot = (i: number): Counter =>
      counter(
        () => Atomics.load(counters, i),
        () => void Atomics.add(counters, i, 1),
        30_000,
      )
    return { profiles: slot(0), entitlements: slot(1) }
  } catch {
    // No shared memory (read-only dir, exotic filesystem): a counter of this process alone;
    // the caches then also expire by age.
    const local = (): Counter => {
      let n = 0
      return counter(
        () => n,
        () => void n++,
        1000,
      )
    }
    return { profiles: local(), entitlements: local() }
  }
}
