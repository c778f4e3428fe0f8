import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import type { Config } from '../daemon/config.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs } from './shared.ts'

const common = { ...configArgs, ...clientArgs } as const
type CommonArgs = { config?: string; 'data-dir'?: string; url?: string }

const api = (args: CommonArgs) => operatorApi(configFromArgs(args), args.url)
const print = (data: unknown) => console.log(JSON.stringify(data, null, 2))

/** Downloads a binary resource as the operator (operatorApi decodes bodies as text). */
async function download(
  config: Config,
  url: string | undefined,
  path: string,
): Promise<Uint8Array> {
  const base = url ?? `http://127.0.0.1:${config.ports.gateway}`
  let email = config.get<string>('operator.email')
  let password = config.get<string | null>('operator.password')
  const file = join(config.dataDir, 'operator.txt')
  if (!password && existsSync(file)) {
    const text = readFileSync(file, 'utf8')
    email = /email: (.+)/.exec(text)?.[1]?.trim() ?? email
    password = /password: (.+)/.exec(text)?.[1]?.trim() ?? null
  }
  if (!password) fail('no operator credentials: set MMP_OPERATOR_PASSWORD')
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  }).catch(() => fail(`the platform is not reachable at ${base}`))
  const { access_token } = (await login.json()) as { access_token?: string }
  if (!access_token) fail(`operator login failed: ${login.status}`)
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${access_token}` } })
  if (!res.ok) fail(`GET ${path}: ${res.status} ${await res.text()}`)
  return new Uint8Array(await res.arrayBuffer())
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
        const config = configFromArgs(args)
        const pdf = await download(config, args.url, `/api/v1/billing/invoices/${args.id}/pdf`)
        const out = args.out ?? `${args.id}.pdf`
        writeFileSync(out, pdf)
        consola.success(`wrote ${out} (${pdf.length} bytes)`)
      },
    }),
  },
})
