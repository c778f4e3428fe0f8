/**
 * Cashflow benchmark: a tenant with three years of daily history (a synthetic shop, about ten
 * transactions a day). Measures the forecast route (fit, backtest, 30-day horizon) and the analyze
 * route over the whole three years, through the service's HTTP handler with a real token, against
 * a reference measured in the same run: reading the series and answering seasonal naive.
 * Run: bun bench/cashflow.ts
 */
import { migrations } from '../schema/cashflow/migrations.ts'
import { seasonalNaive } from '../services/cashflow/holt-winters.ts'
import { createCashflowApp } from '../services/cashflow/routes.ts'
import { loadDailySeries, netOf, seriesBounds } from '../services/cashflow/series.ts'
import { ingestBatch } from '../services/cashflow/service.ts'
import { createTestKit } from '../services/kernel/testing.ts'
import { addDays } from '../services/kernel/time-zone.ts'
import { syntheticBusiness } from '../test/cashflow-fixtures.ts'
import { sized } from './support.ts'

const TENANT = 'bench-shop'
const DAYS = sized(3 * 365, 120)
const RUNS = sized(30, 3)

const kit = await createTestKit('cashflow', { migrations })
const biz = syntheticBusiness({ start: '2023-01-01', days: DAYS, idPrefix: 'txn_bench' })
const t0 = performance.now()
for (let i = 0; i < biz.transactions.length; i += 1000) {
  ingestBatch(kit.ctx, {
    tenantId: TENANT,
    eventId: `evt_bench_${i}`,
    transactions: biz.transactions.slice(i, i + 1000),
  })
}
const ingestMs = performance.now() - t0
kit.ctx.clock.set(`${addDays('2023-01-01', DAYS)}T09:00:00Z`)
const app = createCashflowApp(kit.ctx)
const auth = await kit.authFor({ tenantId: TENANT, role: 'Analyst' })
const db = kit.registry.tenant('cashflow', TENANT)

async function time(label: string, fn: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 3; i++) await fn()
  const samples: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now()
    await fn()
    samples.push(performance.now() - s)
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(RUNS / 2)]!
  const p95 = samples[Math.floor(RUNS * 0.95)]!
  console.log(`  ${label.padEnd(44)} median ${median.toFixed(2)} ms  p95 ${p95.toFixed(2)} ms`)
  return median
}

const call = async (method: string, path: string, body?: unknown) => {
  const res = await app.handle(
    new Request(`http://cashflow${path}`, {
      method,
      headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }),
  )
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

console.log(
  `cashflow bench: ${DAYS} days, ${biz.transactions.length} transactions (ingested in ${ingestMs.toFixed(0)} ms)`,
)
const reference = await time('reference: read series + seasonal naive', () => {
  const b = seriesBounds(db, TENANT)!
  return seasonalNaive(
    netOf(loadDailySeries(db, { tenantId: TENANT, from: b.first, to: b.last })),
    30,
  )
})
const forecastMs = await time('GET /forecast?horizon=30 (fit + backtest)', () =>
  call('GET', '/api/v1/cashflow/forecast?horizon=30'),
)
const analyzeMs = await time('POST /analyze over 3 years', () =>
  call('POST', '/api/v1/cashflow/analyze', {
    from: '2023-01-01',
    to: addDays('2023-01-01', DAYS - 1),
  }),
)
const sample = (await call('GET', '/api/v1/cashflow/forecast?horizon=30')) as {
  backtest: { mase: number }
  baseline: { mase: number }
}
console.log(
  `forecast: ${forecastMs.toFixed(2)} ms (target ≤ 50 ms, ${forecastMs <= 50 ? 'met' : 'MISSED'}); ` +
    `${(forecastMs / reference).toFixed(1)}× the seasonal-naive reference; ` +
    `backtest MASE ${sample.backtest.mase} vs seasonal naive ${sample.baseline.mase}`,
)
console.log(
  `analyze: ${analyzeMs.toFixed(2)} ms (target ≤ 100 ms, ${analyzeMs <= 100 ? 'met' : 'MISSED'}); ` +
    `${(analyzeMs / reference).toFixed(1)}× the seasonal-naive reference`,
)
kit.cleanup()
