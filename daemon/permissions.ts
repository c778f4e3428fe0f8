import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** Folders of the data dir: only the owner may list or enter them. */
export const DIR_MODE = 0o700
/** Every file of the data dir (databases with password hashes, keys, secrets): owner only. */
export const FILE_MODE = 0o600

/**
 * Makes every file this process creates from now on private to its owner, whatever umask it was
 * started with: SQLite creates databases, WAL and shared-memory files with the process umask, so
 * this is what keeps a tenant database made next month at 0600.
 */
export function restrictNewFiles(): void {
  process.umask(0o077)
}

/**
 * Sets the data dir (and each folder given, such as an Enterprise tenant's dedicated database
 * path) to 0700 and everything in it to 0600 (folders 0700), correcting installs made with a
 * loose umask. Links are not followed. Returns how many entries were changed.
 *
 * @example
 * restrictNewFiles()
 * secureTree(config.dataDir)
 */
export function secureTree(root: string): number {
  if (!existsSync(root)) return 0
  let changed = 0
  const visit = (path: string) => {
    const st = lstatSync(path)
    if (st.isSymbolicLink()) return
    const want = st.isDirectory() ? DIR_MODE : FILE_MODE
    if ((st.mode & 0o777) !== want) {
      chmodSync(path, want)
      changed++
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(root)
  return changed
}

/**
 * The data dir and every Enterprise tenant's dedicated database folder (named in its placement
 * profile), secured as `secureTree` does.
 */
export function secureDataDir(dataDir: string): number {
  let changed = secureTree(dataDir)
  const tenants = join(dataDir, 'tenants')
  if (!existsSync(tenants)) return changed
  for (const id of readdirSync(tenants)) {
    const file = join(tenants, id, 'placement.json')
    if (!existsSync(file)) continue
    try {
      const p = JSON.parse(readFileSync(file, 'utf8')) as { database_path?: string }
      if (p.database_path) changed += secureTree(resolve(dataDir, p.database_path))
    } catch {
      // A profile being rewritten right now is secured on the next start.
    }
  }
  return changed
}
