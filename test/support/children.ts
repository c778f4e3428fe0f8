import type { Subprocess } from 'bun'

/** A long-running process a test started through test/support, and the file that started it. */
interface Child {
  proc: Subprocess
  what: string
  file: string
}

const children = new Set<Child>()

/** The test file in the current call stack (the one that asked test/support for a process). */
function callingTestFile(): string {
  const stack = new Error().stack ?? ''
  const m = /([^\s(]+\.test\.ts):\d+/.exec(stack)
  return m?.[1]?.replace(`${process.cwd()}/`, '') ?? 'an unknown test file'
}

/**
 * Remembers a platform (or broker, or forwarder) a test started, so that the end of the run can
 * fail when the test left it running (test/support/preload.ts).
 *
 * @example
 * const proc = spawn([...])
 * trackChild(proc, 'mmp serve')
 */
export function trackChild(proc: Subprocess, what: string): void {
  const child = { proc, what, file: callingTestFile() }
  children.add(child)
  void proc.exited.then(() => children.delete(child))
}

/**
 * The tracked processes still running, after waiting up to `graceMs` for those already on their
 * way out. Each is then SIGKILLed, so one test's leak cannot hold ports for the next.
 */
export async function killLeftBehind(graceMs = 2000): Promise<string[]> {
  const running = () =>
    [...children].filter((c) => c.proc.exitCode === null && c.proc.signalCode === null)
  if (running().length === 0) return []
  await Promise.race([Promise.all(running().map((c) => c.proc.exited)), Bun.sleep(graceMs)])
  const left = running()
  for (const c of left) c.proc.kill('SIGKILL')
  return left.map((c) => `${c.what} (pid ${c.proc.pid}) started by ${c.file}`)
}
