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
}

export interface ProfileGeneration {
  /** Placements and existence (written by the tenant service). */
  profiles: Counter
  /** Entitlements (written by billing, far more often: its own counter, so placements stay cached). */
  entitlements: Counter
  /** How long a cache entry may be trusted while the counter stands (a safety net for hand edits). */
  readonly trustMs: number
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
    const slot = (i: number): Counter => ({
      read: () => Atomics.load(counters, i),
      bump: () => void Atomics.add(counters, i, 1),
    })
    return { profiles: slot(0), entitlements: slot(1), trustMs: 30_000 }
  } catch {
    // No shared memory (read-only dir, exotic filesystem): a counter of this process alone;
    // the caches then also expire by age.
    const local = (): Counter => {
      let n = 0
      return { read: () => n, bump: () => void n++ }
    }
    return { profiles: local(), entitlements: local(), trustMs: 1000 }
  }
}
