import type { DestinationPolicy } from './ssrf.ts'

/** The webhook service's slice of the settings (daemon/settings.ts `webhook.*`). */
export interface WebhookConfig extends DestinationPolicy {
  /** Delay in ms before each attempt; its length is the number of attempts. */
  retrySchedule: number[]
  timeoutMs: number
  /** Default deliveries per second per endpoint. */
  rateLimit: number
  /** Concurrent attempts per endpoint. */
  maxInFlight: number
  /** Concurrent attempts over all endpoints. */
  maxInFlightTotal: number
  /** How long a rotated secret keeps signing alongside the new one. */
  rotationOverlapMs: number
}

export function webhookConfig(s: Record<string, unknown>): WebhookConfig {
  const schedule = (s['webhook.retry_schedule'] as number[] | undefined) ?? [0, 5000, 300000]
  return {
    allowInsecure: Boolean(s['webhook.allow_insecure']),
    allowHosts: (s['webhook.allow_hosts'] as string[] | undefined) ?? [],
    retrySchedule: schedule.length > 0 ? schedule : [0],
    timeoutMs: (s['webhook.timeout_ms'] as number | undefined) ?? 10_000,
    rateLimit: (s['webhook.rate_limit'] as number | undefined) ?? 500,
    maxInFlight: (s['webhook.max_in_flight'] as number | undefined) ?? 32,
    maxInFlightTotal: 512,
    rotationOverlapMs: 24 * 3600 * 1000,
  }
}
