import { readFileSync } from 'node:fs'

/**
 * Whether a process exists: signal 0 checks without touching it (EPERM: it exists, not ours). A
 * zombie exists too until something reaps it, which a container's first process may never do:
 * on Linux its state in /proc says it is dead.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^\d+ \(.*\) [ZX] /s.test(stat)
  } catch {
    return true
  }
}

/**
 * When a process started (clock ticks since boot, /proc/<pid>/stat field 22), or null where
 * unreadable. With the pid it names one process: a pid the kernel handed out again (a busy box, or
 * a container restarted, whose processes count from 1 again) starts at another time.
 */
export function processStart(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces and parentheses: the fields follow its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const start = Number(fields[19])
    return Number.isFinite(start) ? start : null
  } catch {
    return null
  }
}
