import { writeFileSync } from 'node:fs'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs } from './shared.ts'

const common = { ...configArgs, ...clientArgs } as const
type CommonArgs = { config?: string; 'data-dir'?: string; url?: string }

const api = (args: CommonArgs) => operatorApi(configFromArgs(args), args.url)
const print = (data: unknown) => console.log(JSON.stringify(data, null, 2))

const tenantArg = {
  tenant: { type: 'positional', description: 'tenant id', required: true },
} as const

export default defineCommand({
  meta: { name: 'billing', description: 'Plans, subscriptions, usage and invoices' },
  subCommands: {
    plans: defineCommand({
      meta: { name: 'plans', description: 'List the subscription plans' },
      args: common,
      async run({ args }) {
        print((await (await api(args)).call('GET', '/api/v1/billing/plans')).data)
      },
    }),
    subscription: defineCommand({
      meta: { name: 'subscription', description: "Show a tenant's subscription" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        print(await (await api(args)).call('GET', `/api/v1/billing/subscriptions/${args.tenant}`))
      },
    }),
    usage: defineCommand({
      meta: { name: 'usage', description: "Show a tenant's usage against its limits" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        print(await (await api(args)).call('GET', `/api/v1/billing/usage/${args.tenant}`))
      },
    }),
    invoices: defineCommand({
      meta: { name: 'invoices', description: "List a tenant's invoices" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        const q = `tenant_id=${encodeURIComponent(args.tenant)}&limit=500`
        print((await (await api(args)).call('GET', `/api/v1/billing/invoices?${q}`)).data)
      },
    }),
    'run-cycle': defineCommand({
      meta: {
        name: 'run-cycle',
        description: 'Invoice ended periods, mark overdue and suspend, as of now or --at',
      },
      args: {
        ...common,
        at: { type: 'string', description: 'ISO 8601 time to run the cycle as of' },
      },
      async run({ args }) {
        if (args.at && Number.isNaN(Date.parse(args.at))) fail(`--at: not a date: ${args.at}`)
        const body = args.at ? { at: new Date(args.at).toISOString() } : {}
        const report = await (await api(args)).call('POST', '/api/v1/billing/run-cycle', body)
        print(report)
      },
    }),
    'invoice-pdf': defineCommand({
      meta: { name: 'invoice-pdf', description: 'Download an invoice as PDF' },
      args: {
        ...common,
        id: { type: 'positional', description: 'invoice id', required: true },
        out: { type: 'string', description: 'file to write (default <id>.pdf)' },
      },
      async run({ args }) {
        const pdf = await (await api(args)).download(`/api/v1/billing/invoices/${args.id}/pdf`)
        const out = args.out ?? `${args.id}.pdf`
        writeFileSync(out, pdf)
        consola.success(`wrote ${out} (${pdf.length} bytes)`)
      },
    }),
  },
})
