/**
 * The one source of time. Tests and `--at` CLI options move it; nothing else calls Date.now()
 * for business decisions.
 *
 * @example
 * const clock = createClock(); clock.set('2026-02-01T00:00:00Z'); clock.now() // Date
 */
export interface Clock {
  now(): Date
  nowMs(): number
  set(at: Date | string | number | null): void
  advance(ms: number): void
}

export function createClock(): Clock {
  let offset = 0
  let fixed: number | null = null
  return {
    now: () => new Date(fixed ?? Date.now() + offset),
    nowMs: () => fixed ?? Date.now() + offset,
    set(at) {
      fixed = null
      offset = at == null ? 0 : new Date(at).getTime() - Date.now()
    },
    advance(ms) {
      offset += ms
    },
  }
}
