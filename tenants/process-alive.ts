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
