/**
 * Time budgets that hold on a busy machine. A test whose subject is time compares against a
 * reference taken in the same run (an operation of the same kind, on the same machine, under the
 * same load), not against a wall-clock constant that a loaded CI box overruns.
 */

/** Milliseconds `fn` took, and what it returned. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await fn()
  return { value, ms: performance.now() - started }
}

/**
 * The median time of `runs` calls of `fn`: a reference for how long such a request takes here and
 * now (one slow outlier, a GC pause, does not move it).
 *
 * @example
 * const ref = await referenceMs(() => fetch(`${p.gateway}/health`))
 * await eventually(revoked, budgetMs({ floor: 1000, reference: ref, factor: 20 }))
 */
export async function referenceMs(fn: () => Promise<unknown>, runs = 5): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) times.push((await timed(fn)).ms)
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

/**
 * The product's budget (`floor`, what an idle machine must meet) or `factor` times the reference,
 * whichever is larger: the same promise, scaled by how slow this machine is at the moment.
 */
export function budgetMs(o: { floor: number; reference: number; factor: number }): number {
  return Math.max(o.floor, Math.ceil(o.reference * o.factor))
}
