import { writeFileSync } from 'node:fs'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import type { Plan, UsageStats } from '../schema/peers.ts'
import {
  type CycleReportOut,
  formatCycle,
  formatInvoices,
  formatPlans,
  formatSubscription,
  formatUsage,
  type InvoiceOut,
  type SubscriptionOut,
} from './billing-format.ts'
import { formatPreview, previewCycle } from './billing-preview.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs, jsonArg, printJson } from './shared.ts'

const common = { ...configArgs, ...clientArgs, ...jsonArg } as const
type CommonArgs = { config?: string; 'data-dir'?: string; url?: string; json?: boolean }

const api = (args: CommonArgs) => operatorApi(configFromArgs(args), args.url)
/** The API's answer as JSON with --json, else the human form. */
const show = <T>(args: CommonArgs, data: T, human: (d: T) => string) =>
  args.json ? printJson(data) : console.log(human(data))

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
        const { data } = await (await api(args)).call<{ data: Plan[] }>(
          'GET',
          '/api/v1/billing/plans',
        )
        show(args, data, formatPlans)
      },
    }),
    subscription: defineCommand({
      meta: { name: 'subscription', description: "Show a tenant's subscription" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        const path = `/api/v1/billing/subscriptions/${encodeURIComponent(args.tenant)}`
        show(args, await (await api(args)).call<SubscriptionOut>('GET', path), formatSubscription)
      },
    }),
    usage: defineCommand({
      meta: { name: 'usage', description: "Show a tenant's usage against its limits" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        const path = `/api/v1/billing/usage/${encodeURIComponent(args.tenant)}`
        show(args, await (await api(args)).call<UsageStats>('GET', path), formatUsage)
      },
    }),
    invoices: defineCommand({
      meta: { name: 'invoices', description: "List a tenant's invoices" },
      args: { ...common, ...tenantArg },
      async run({ args }) {
        const q = `tenant_id=${encodeURIComponent(args.tenant)}&limit=500`
        const { data } = await (await api(args)).call<{ data: InvoiceOut[] }>(
          'GET',
          `/api/v1/billing/invoices?${q}`,
        )
        show(args, data, (d) => formatInvoices(args.tenant, d))
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
      },
      async run({ args }) {
        if (args.at && Number.isNaN(Date.parse(args.at))) fail(`--at: not a date: ${args.at}`)
        const at = args.at ? new Date(args.at) : new Date()
        const client = await api(args)
        if (!args.yes) {
          const rows = await previewCycle(client, at)
          if (args.json && args['dry-run'])
            return printJson({ at: at.toISOString(), tenants: rows })
          // With --json and no --yes there is no terminal conversation to have on stdout.
          if (args.json && rows.length > 0)
            fail(
              `run-cycle would change ${rows.length} tenant(s); with --json pass --yes to run it or --dry-run to see the preview`,
            )
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
        show(
          args,
          await client.call<CycleReportOut>('POST', '/api/v1/billing/run-cycle', body),
          formatCycle,
        )
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
        if (args.json) return printJson({ id: args.id, file: out, bytes: pdf.length })
        consola.success(`wrote ${out} (${pdf.length} bytes)`)
      },
    }),
  },
})
