import { defineCommand } from 'citty'
import { normalizePhone, PHONE_FORMATS } from '../services/payment/public.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs, jsonArg, printJson } from './shared.ts'

const reconcile = defineCommand({
  meta: {
    name: 'reconcile',
    description:
      "Ask the provider now about payments pending longer than mpesa.reconcile_after_s, and look pushes whose answer was lost up in the provider's own record",
  },
  args: { ...configArgs, ...clientArgs, ...jsonArg },
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
    if (args.json) return printJson(r)
    console.log(
      `checked ${r.checked}, settled ${r.settled}, still pending ${r.still_pending}, query failures ${r.failed_to_query}, unknown (no answer from the provider yet) ${r.unknown}`,
    )
  },
})

const simulateC2b = defineCommand({
  meta: {
    name: 'simulate-c2b',
    description:
      'Simulator mode: a customer pays a till (or, with --account, a paybill); the simulator then calls the registered validation and confirmation URLs',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...jsonArg,
    shortcode: { type: 'string', required: true, description: 'till or paybill number' },
    amount: { type: 'string', required: true, description: 'whole shillings' },
    phone: { type: 'string', required: true, description: `payer: ${PHONE_FORMATS}` },
    account: { type: 'string', description: 'account number typed (paybill)' },
  },
  async run({ args }) {
    const phone = normalizePhone(args.phone)
    if (!phone) fail(`--phone: expected ${PHONE_FORMATS}, got '${args.phone}'`)
    const amount = Number(args.amount)
    if (!Number.isInteger(amount) || amount < 1)
      fail(`--amount: expected whole shillings, got '${args.amount}'`)
    const api = await operatorApi(configFromArgs(args), args.url)
    const r = await api.call<{ status: string; response_description: string }>(
      'POST',
      '/api/v1/payments/c2b/simulate',
      {
        shortcode: args.shortcode,
        amount,
        phone_number: phone,
        ...(args.account ? { account: args.account } : {}),
      },
    )
    if (args.json) return printJson(r)
    console.log(
      `${phone} pays KES ${amount} to ${args.shortcode}${args.account ? ` account ${args.account}` : ''}: ${r.response_description}`,
    )
  },
})

export default defineCommand({
  meta: { name: 'payments', description: 'Payment operations' },
  subCommands: { reconcile, 'simulate-c2b': simulateC2b },
})
