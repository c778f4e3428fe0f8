import { defineCommand } from 'citty'
import { clientArgs, operatorApi } from './client.ts'
import { configArgs, configFromArgs } from './shared.ts'

const reconcile = defineCommand({
  meta: {
    name: 'reconcile',
    description: 'Ask the provider now about payments pending longer than mpesa.reconcile_after_s',
  },
  args: { ...configArgs, ...clientArgs },
  async run({ args }) {
    const config = configFromArgs(args)
    const api = await operatorApi(config, args.url)
    const r = await api.call<{
      checked: number
      settled: number
      still_pending: number
      failed_to_query: number
      unknown: number
    }>('POST', '/api/v1/payments/reconcile')
    console.log(
      `checked ${r.checked}, settled ${r.settled}, still pending ${r.still_pending}, query failures ${r.failed_to_query}, unknown (waiting for their callback) ${r.unknown}`,
    )
  },
})

export default defineCommand({
  meta: { name: 'payments', description: 'Payment operations' },
  subCommands: { reconcile },
})
