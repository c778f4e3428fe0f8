import { renameSync, writeFileSync } from 'node:fs'

/**
 * Replaces a small JSON state file atomically: written beside it, then renamed over it, so a
 * reader (another process too) sees the old content or the new, never half of it.
 *
 * @example
 * replaceJson(join(dir, 'placement.json'), placement)
 */
export function replaceJson(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(value))
  renameSync(`${file}.tmp`, file)
}
