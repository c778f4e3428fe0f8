/**
 * Runs work one at a time per key, in arrival order, in this process: each run starts when the
 * previous run of its key settled (a failure does not stop the queue), and a key without work
 * waiting takes no memory.
 *
 * @example
 * const perTenant = perKeyQueue()
 * await perTenant(tenantId, () => applyChange(tenantId))
 */
export function perKeyQueue(): <T>(key: string, fn: () => Promise<T> | T) => Promise<T> {
  const tails = new Map<string, Promise<void>>()
  return (key, fn) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn)
    const tail = run.then(
      () => {},
      () => {},
    )
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return run
  }
}
