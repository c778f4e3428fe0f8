import { counter, gauge, histogram } from '../kernel/metrics.ts'

/** Webhook counters, served by the gateway at /metrics. */
export const attemptsTotal = counter(
  'mmp_webhook_attempts_total',
  'Webhook delivery attempts by result',
  ['result'],
)
export const deliveriesTotal = counter(
  'mmp_webhook_deliveries_total',
  'Webhook deliveries that reached a final state',
  ['status'],
)
export const attemptSeconds = histogram(
  'mmp_webhook_attempt_duration_seconds',
  'Duration of webhook delivery attempts',
)
export const inFlightGauge = gauge('mmp_webhook_in_flight', 'Webhook attempts in flight')
export const pendingGauge = gauge('mmp_webhook_pending', 'Webhook deliveries waiting (pending)')
export const deadGauge = gauge('mmp_webhook_dead', 'Webhook deliveries in the dead-letter state')
