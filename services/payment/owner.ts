import { readFileSync } from 'node:fs'

/**
 * Who is calling the provider for an `initiating` payment: `<boot id>:<pid>:<start time>` of the
 * process, written with the row. A sibling worker (or the next process after a crash) on the same
 * machine can then tell at once that the owner is gone, instead of waiting out the provider's
 * whole call budget. The start time tells a reused pid from the owner itself.
 */
const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null when unreadable. */
function startTimeOf(pid: number | 'self'): string | null {
  const stat = read(`/proc/${pid}/stat`)
  if (!stat) return null
  // The command name (field 2) may hold spaces and brackets: count from the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return rest[19] ?? null
}

const bootId = read('/proc/sys/kernel/random/boot_id')?.trim() ?? null

/** A running process as an owner; null where /proc is not there to check owners by. */
export function ownerOf(pid: number | 'self'): string | null {
  const start = startTimeOf(pid)
  return bootId && start ? `${bootId}:${pid === 'self' ? process.pid : pid}:${start}` : null
}

/** This process as an owner. */
export const SELF_OWNER: string | null = ownerOf('self')

/**
 * 'dead' when the owner certainly ended (same machine and boot, and its pid is gone or is another
 * process now), 'alive' when it still runs, 'unknown' when it cannot be told (another machine, no
 * owner recorded, no /proc).
 */
export function ownerState(owner: string | null): 'dead' | 'alive' | 'unknown' {
  if (!owner || !bootId) return 'unknown'
  const [boot, pid, start] = owner.split(':')
  if (boot !== bootId || !pid || !start) return 'unknown'
  const now = startTimeOf(Number(pid))
  return now === start ? 'alive' : 'dead'
}
