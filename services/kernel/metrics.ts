import { Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The process-wide Prometheus registry: services register their counters here and the gateway
 * serves it at `/metrics`. Get-or-create helpers keep a metric defined once however many
 * instances ask for it.
 *
 * @example
 * const delivered = counter('mmp_webhook_deliveries_total', 'Webhook delivery attempts', ['status'])
 * delivered.inc({ status: 'success' })
 */
export const metrics = new Registry()

export function counter<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> {
  return (
    (metrics.getSingleMetric(name) as Counter<L>) ??
    new Counter({ name, help, labelNames, registers: [metrics] })
  )
}

export function gauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Gauge<L> {
  return (
    (metrics.getSingleMetric(name) as Gauge<L>) ??
    // Workers' gauges describe shared state (a breaker, a queue): their maximum, not their sum.
    new Gauge({ name, help, labelNames, registers: [metrics], aggregator: 'max' })
  )
}

export function histogram<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
): Histogram<L> {
  return (
    (metrics.getSingleMetric(name) as Histogram<L>) ??
    new Histogram({ name, help, labelNames, buckets, registers: [metrics] })
  )
}
