/**
 * How the simulator calls back: later, once, and again on a 429, a 5xx or a network error (up to
 * five retries with backoff, honouring Retry-After up to 5 s), so a rate-limited gateway delays a
 * callback instead of losing it. Stopping clears every timer; what was not delivered stays due
 * in the store and is sent on the next start.
 */
export function createDelivery() {
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let stopped = false

  const later = (ms: number, fn: () => Promise<void>) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      // After stop the store is closed: a callback finishing then is simply left for the next start.
      fn().catch(() => {})
    }, ms)
    timers.add(timer)
  }

  const post = async (
    url: string,
    body: unknown,
    rec: { callbackStatus: number | null; callbackError: string | null },
  ): Promise<boolean> => {
    for (let attempt = 0; attempt < 6; attempt++) {
      let wait = 100 * 2 ** attempt
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        })
        rec.callbackStatus = res.status
        rec.callbackError = null
        await res.arrayBuffer()
        if (res.status !== 429 && res.status < 500) return true
        const retryAfter = Number(res.headers.get('retry-after'))
        if (Number.isFinite(retryAfter) && retryAfter > 0) wait = Math.min(5000, retryAfter * 1000)
      } catch (err) {
        rec.callbackError = (err as Error).message
      }
      if (stopped) return false
      await Bun.sleep(wait)
    }
    return true
  }

  /**
   * One request that wants an answer, as Daraja asks a validation URL: one attempt, 8 seconds.
   * The parsed JSON answer, or null when there was none (then the registered ResponseType decides).
   */
  const ask = async (url: string, body: unknown): Promise<Record<string, unknown> | null> => {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(8_000),
      })
      if (!res.ok) {
        await res.arrayBuffer()
        return null
      }
      const v = await res.json()
      return v && typeof v === 'object' ? (v as Record<string, unknown>) : null
    } catch {
      return null
    }
  }

  return {
    later,
    post,
    ask,
    get stopped() {
      return stopped
    },
    stop() {
      stopped = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
    },
  }
}

export type Delivery = ReturnType<typeof createDelivery>
