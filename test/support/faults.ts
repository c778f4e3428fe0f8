import { expect } from 'bun:test'
import type { TestPlatform } from './platform.ts'

/**
 * Crash tests on fault points (DESIGN §15): the platform is restarted with
 * `MMP_ALLOW_FAULTS=1 MMP_FAULT=<point>`, SIGKILLs itself exactly there, and is started again
 * with `DISARMED`.
 */
export const DISARMED = { MMP_FAULT: '' }

/** Stops cleanly (outboxes flushed), then starts again with the fault point armed. */
export async function rearm(platform: TestPlatform, point: string): Promise<void> {
  expect(await platform.stop()).toBe(0)
  await platform.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: point })
}

/** Waits (bounded) for the process to have killed itself at `point`. */
export async function crashed(platform: TestPlatform, point: string): Promise<void> {
  const timeout = Bun.sleep(15_000).then(() => `still running: ${platform.logs().slice(-2000)}`)
  expect(await Promise.race([platform.exited(), timeout])).toBe('SIGKILL')
  expect(platform.logs()).toContain(`fault point ${point} reached`)
}
