import { defineCommand } from 'citty'
import type { UsageStats } from '../schema/peers.ts'
import { fitDemo } from '../services/parser/public.ts'
import { type CliApi, clientArgs, fail, operatorApi } from './client.ts'
import { progressBar } from './progress.ts'
import { configArgs, configFromArgs, jsonArg, printJson, tenantArg } from './shared.ts'

interface Totals {
  accepted: number
  duplicates: number
  rejected: number
}

const seed = defineCommand({
  meta: {
    name: 'seed',
    description: 'Write a realistic synthetic business history for a tenant through the API',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...tenantArg,
    ...jsonArg,
    days: { type: 'string', description: 'days of history', default: '365' },
    seed: { type: 'string', description: 'random seed (same seed, same data)', default: '1' },
    end: { type: 'string', description: 'last day YYYY-MM-DD (default: today)' },
  },
  async run({ args }) {
    const days = Number(args.days)
    const seedValue = Number(args.seed)
    if (!Number.isInteger(days) || days < 1 || days > 3660) fail('--days must be 1 to 3660')
    if (!Number.isInteger(seedValue)) fail('--seed must be an integer')
    const end = args.end ?? new Date().toISOString().slice(0, 10)
    if (!/^\d{4}-\d{2}-\d{2}$/.test(end)) fail('--end must be YYYY-MM-DD')
    const config = configFromArgs(args)
    const api = await operatorApi(config, args.url)
    const plan = await planRoom(api, args.tenant)
    const { transactions, days: written } = fitDemo(
      { days, seed: seedValue, end },
      plan?.room ?? null,
    )
    const bar = progressBar(`seeding ${args.tenant}`, transactions.length)
    const totals: Totals = { accepted: 0, duplicates: 0, rejected: 0 }
    for (let i = 0; i < transactions.length; i += 1000) {
      await sendDemoBatch(api, args.tenant, transactions.slice(i, i + 1000), totals)
      bar.update(Math.min(transactions.length, i + 1000))
    }
    bar.done()
    const stopped =
      plan && written < days
        ? `stopped early: wrote the last ${written} of ${days} days, because the ${plan.plan} plan allows ${plan.limit.toLocaleString('en-KE')} transactions a month and ${plan.used.toLocaleString('en-KE')} are used; demo rows are not billed`
        : null
    if (args.json)
      return printJson({
        tenant_id: args.tenant,
        days_asked: days,
        days_written: written,
        ...totals,
        stopped_early: stopped,
      })
    // The summary is the command's output: plain stdout, whatever consola's level.
    console.log(
      `${args.tenant}: ${written} days, ${totals.accepted} transactions written (${totals.duplicates} already there)`,
    )
    if (stopped) console.log(stopped)
    if (totals.rejected > 0) {
      process.stderr.write(`mmp demo seed: ${totals.rejected} rows were rejected\n`)
      process.exitCode = 1
    }
  },
})

/**
 * How many transactions the tenant's plan leaves this period (billing's usage), so the demo shows
 * no more than the plan allows. Null without a limit, or without billing running (the parser still
 * refuses what is over). A tenant that does not exist stops the command here.
 */
async function planRoom(api: CliApi, tenant: string) {
  const r = await api.read<UsageStats & { detail?: string }>(
    `/api/v1/billing/usage/${encodeURIComponent(tenant)}`,
  )
  if (r.status === 404 && r.body?.detail?.includes('does not exist')) fail(r.body.detail)
  const metric = r.status === 200 ? r.body.metrics.transactions : undefined
  if (!metric || metric.limit === null) return null
  const used = metric.used ?? 0
  return { plan: r.body.plan, limit: metric.limit, used, room: Math.max(0, metric.limit - used) }
}

/** A batch marked demo: the parser stores it without metering it (services/parser/demo.ts). */
async function sendDemoBatch(api: CliApi, tenant: string, rows: unknown[], totals: Totals) {
  const r = await api.call<Totals>('POST', '/api/v1/parser/transactions', {
    tenant_id: tenant,
    demo: true,
    transactions: rows,
  })
  totals.accepted += r.accepted
  totals.duplicates += r.duplicates
  totals.rejected += r.rejected
}

export default defineCommand({
  meta: { name: 'demo', description: 'Demo data' },
  subCommands: { seed },
})
