import { defineCommand } from 'citty'
import { generateDemo } from '../services/parser/public.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { progressBar, sendBatch, type Totals } from './import.ts'
import { configArgs, configFromArgs } from './shared.ts'

const seed = defineCommand({
  meta: {
    name: 'seed',
    description: 'Write a realistic synthetic business history for a tenant through the API',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    tenant: { type: 'string', description: 'tenant id', required: true },
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
    const transactions = generateDemo({ days, seed: seedValue, end })
    const bar = progressBar(`seeding ${args.tenant}`, transactions.length)
    const totals: Totals = { accepted: 0, duplicates: 0, rejected: 0, skipped: 0, errors: [] }
    for (let i = 0; i < transactions.length; i += 1000) {
      await sendBatch(api, args.tenant, transactions.slice(i, i + 1000), totals)
      bar.update(Math.min(transactions.length, i + 1000))
    }
    bar.done()
    // The summary is the command's output: plain stdout, whatever consola's level.
    console.log(
      `${args.tenant}: ${days} days, ${totals.accepted} transactions written (${totals.duplicates} already there)`,
    )
  },
})

export default defineCommand({
  meta: { name: 'demo', description: 'Demo data' },
  subCommands: { seed },
})
