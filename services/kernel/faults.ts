/**
 * Fault points for deterministic crash tests (DESIGN §15): with faults allowed, reaching the named
 * point makes the process SIGKILL itself there, so a test can crash at an exact step instead of
 * killing after a guessed sleep. The daemon configures it once from `MMP_ALLOW_FAULTS` and
 * `MMP_FAULT`; without permission a requested fault is ignored (the daemon logs a warning).
 *
 * @example
 * const accepted = await provider.stkPush(request)
 * faultPoint('payment.after_provider_accepted')
 */
export const FAULT_POINTS = [
  'payment.after_provider_accepted',
  'payment.after_settle_commit',
  'b2c.after_provider_accepted',
  'relay.after_publish',
  'webhook.after_send',
  'tenant.move.after_copy',
  'handoff.after_pack',
  'tenant.handoff.after_pull',
  'billing.cycle.after_invoice',
] as const
export type FaultPoint = (typeof FAULT_POINTS)[number]

let armed: string | null = null
let supervisor: number | undefined

/**
 * Arms one fault point (or none). Called by the daemon only, after checking permission. A worker
 * of `mmp serve --workers N` names its supervisor: the crash takes the whole platform down, as
 * the crash tests mean it (the other workers die with their supervisor).
 */
export function configureFaults(point: string | null, opts: { supervisor?: number } = {}): void {
  armed = point || null
  supervisor = opts.supervisor
}

/** SIGKILLs this process when `point` is the armed fault point; otherwise does nothing. */
export function faultPoint(point: FaultPoint): void {
  if (armed !== point) return
  process.stderr.write(`mmp: fault point ${point} reached; killing the process\n`)
  try {
    if (supervisor) process.kill(supervisor, 'SIGKILL')
  } catch {
    // Already gone: a sibling worker reached a fault point first.
  }
  process.kill(process.pid, 'SIGKILL')
}
