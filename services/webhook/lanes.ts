/** Per-endpoint pacing for the dispatcher: attempts in flight and a token bucket (DESIGN §9). */

/**
 * Bucket size: 50 ms worth of the rate. A small burst paces deliveries evenly instead of firing a
 * second's worth at once, which is gentler on receivers and keeps few requests in flight.
 */
export const burstOf = (rate: number) => Math.max(1, Math.ceil(rate / 20))

export interface Lane {
  /** Rowids of the claimed deliveries whose outcome is not committed yet (claims are not written). */
  inFlight: Set<number>
  tokens: number
  refilledAt: number
  /** Epoch ms of the earliest pending delivery, or null when none is known. */
  nextDue: number | null
}

export function newLane(rate: number): Lane {
  return {
    inFlight: new Set(),
    tokens: burstOf(rate),
    refilledAt: performance.now(),
    nextDue: null,
  }
}

/** Whole tokens available now (the bucket refills continuously at `rate` per second). */
export function tokensOf(lane: Lane, rate: number): number {
  const now = performance.now()
  lane.tokens = Math.min(burstOf(rate), lane.tokens + ((now - lane.refilledAt) / 1000) * rate)
  lane.refilledAt = now
  return Math.floor(lane.tokens)
}
