/**
 * The billing service's slice of the configuration, filled by the daemon (daemon/slices.ts) with
 * the settings naming `billing` in daemon/settings.ts.
 */
export interface BillingSettings {
  /** Days an unpaid invoice may stay past due before the subscription is suspended. */
  graceDays: number
  /** Days from issue to due date of an invoice. */
  dueDays: number
  /** How often the billing cycle runs; 0: only on demand. */
  cycleIntervalS: number
}
