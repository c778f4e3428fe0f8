import { writeFileSync } from 'node:fs'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { formatPreview, previewCycle } from './billing-preview.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs } from './shared.ts'

const common = { ...configArgs, ...clientArgs } as const
type CommonArgs = { config?: string; 'data-dir'?: string; url?: string }

const api = (args: CommonArgs) => operatorApi(configFromArgs(args), args.url)
const print = (data: unknown) => console.log(JSON.stringify(data, null, 2))

/** One yes/no answer from the terminal; anything but y or yes is no. */
async function confirm(question: string): Promise<boolean> {
  process.stdout.write(question)
  for await (const line of console) return /^\s*y(es)?\s*$/i.test(line)
  return false
}

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
        description:
          'Invoice ended periods, mark overdue and suspend, as of now or --at; shows what it would do and asks first',
      },
      args: {
        ...common,
        at: { type: 'string', description: 'ISO 8601 time to run the cycle as of' },
        yes: { type: 'boolean', description: 'run without asking (scripts, no terminal)' },
        'dry-run': { type: 'boolean', description: 'only show what it would do' },
        json: { type: 'boolean', description: 'print the preview or the report as JSON' },
      },
      async run({ args }) {
        if (args.at && Number.isNaN(Date.parse(args.at))) fail(`--at: not a date: ${args.at}`)
        const at = args.at ? new Date(args.at) : new Date()
        const client = await api(args)
        if (!args.yes) {
          const rows = await previewCycle(client, at)
          if (args.json && args['dry-run']) return print({ at: at.toISOString(), tenants: rows })
          if (rows.length === 0) {
            if (args['dry-run']) return console.log(`nothing to do as of ${at.toISOString()}`)
          } else {
            console.log(formatPreview(rows, at))
            if (args['dry-run']) return
            if (!process.stdin.isTTY)
              fail(
                `run-cycle would change ${rows.length} tenant(s) and there is no terminal to ask; pass --yes to run it`,
              )
            if (!(await confirm('Run it? [y/N] '))) fail('run-cycle: nothing done')
          }
        }
        const body = args.at ? { at: at.toISOString() } : {}
        print(await client.call('POST', '/api/v1/billing/run-cycle', body))
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
