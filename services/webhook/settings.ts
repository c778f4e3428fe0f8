import type { DestinationPolicy } from './ssrf.ts'

/**
 * The webhook service's slice of the configuration, filled by the daemon (daemon/slices.ts) with
 * the settings naming `webhook` in daemon/settings.ts. It is the only service holding the key that
 * encrypts signing secrets at rest.
 */
export interface WebhookSettings extends DestinationPolicy {
  /** Delay in ms before each attempt; its length is the number of attempts (never empty). */
  retrySchedule: number[]
  /** One delivery attempt. */
  timeoutMs: number
  /** Default deliveries per second per endpoint. */
  rateLimit: number
  /** Concurrent attempts per endpoint. */
  maxInFlight: number
  /** Base64 of 32 bytes; empty, the service refuses to start. */
  secretKey: string
}

/** What the service's parts work with: its settings without the key, and fixed limits. */
export interface WebhookConfig extends Omit<WebhookSettings, 'secretKey'> {
  /** Concurrent attempts over all endpoints. */
  maxInFlightTotal: number
  /** How long a rotated secret keeps signing alongside the new one. */
  rotationOverlapMs: number
}

export function webhookConfig({ secretKey: _, ...owned }: WebhookSettings): WebhookConfig {
  return { ...owned, maxInFlightTotal: 512, rotationOverlapMs: 24 * 3600 * 1000 }
}
