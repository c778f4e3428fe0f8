import { defineCommand } from 'citty'
import { consola } from 'consola'
import { featureNames } from '../schema/plans.ts'
import type { TenantView } from '../services/tenant/public.ts'
import { type CliApi, clientArgs, fail, operatorApi } from './client.ts'
import { followJob, type JobOut, RESPOND_ASYNC } from './jobs.ts'
import { configArgs, configFromArgs } from './shared.ts'

const common = {
  ...configArgs,
  ...clientArgs,
  json: { type: 'boolean', description: 'print JSON' },
} as const
type Common = { config?: string; 'data-dir'?: string; url?: string; json?: boolean }

const api = (args: Common) => operatorApi(configFromArgs(args), args.url)
const id = { type: 'positional', description: 'tenant id', required: true } as const

/** A tenant as the tenant service answers it, with what a create or a plan change adds. */
type TenantOut = TenantView & {
  invite_token?: string
  invite_url?: string
  moved_rows?: number
}

/** A tenant's move followed as a job when the platform answers 202. */
const followMove = <T>(client: CliApi, tenantId: string, answer: T | JobOut) =>
  followJob(client, answer, {
    path: (job) => `/api/v1/tenants/${tenantId}/jobs/${job}`,
    label: `moving ${tenantId}`,
    interrupted: 'start it again: the move resumes or rolls back',
  })

function show(args: Common, t: TenantOut) {
  if (args.json) return console.log(JSON.stringify(t, null, 2))
  const flags = Object.entries(t.features)
    .map(([k, v]) => `${k}=${v ? 'on' : 'off'}`)
    .join(' ')
  console.log(
    `${t.id}  ${t.name}\n  plan ${t.plan}, isolation ${t.isolation}, status ${t.status}, ${t.timezone}\n  features ${flags}`,
  )
  if (t.invite_token)
    console.log(`  admin invitation (set a password here): ${t.invite_url ?? t.invite_token}`)
}

const create = defineCommand({
  meta: { name: 'create', description: 'Create a tenant and its first Admin' },
  args: {
    ...common,
    name: { type: 'string', description: 'organisation name', required: true },
    'admin-email': { type: 'string', description: 'first Admin email', required: true },
    'admin-password': { type: 'string', description: 'set a password instead of an invitation' },
    id: { type: 'string', description: 'tenant id (default: a slug of the name)' },
    plan: {
      type: 'string',
      description: 'free | pro | enterprise | a plan created in billing',
      default: 'free',
    },
    timezone: { type: 'string', description: 'IANA time zone (default Africa/Nairobi)' },
    'database-path': { type: 'string', description: 'enterprise: dedicated database folder' },
  },
  async run({ args }) {
    const t = await (await api(args)).call<TenantOut>('POST', '/api/v1/tenants', {
      name: args.name,
      admin_email: args['admin-email'],
      plan: args.plan,
      ...(args.id ? { id: args.id } : {}),
      ...(args['admin-password'] ? { admin_password: args['admin-password'] } : {}),
      ...(args.timezone ? { timezone: args.timezone } : {}),
      ...(args['database-path'] ? { database_path: args['database-path'] } : {}),
    })
    if (!args.json) consola.success(`tenant ${t.id} created`)
    show(args, t)
  },
})

const list = defineCommand({
  meta: { name: 'list', description: 'List every tenant' },
  args: { ...common },
  async run({ args }) {
    const { data } = await (await api(args)).call<{ data: TenantOut[] }>('GET', '/api/v1/tenants')
    if (args.json) return console.log(JSON.stringify(data, null, 2))
    if (data.length === 0) return consola.info('no tenants yet')
    const w = Math.max(2, ...data.map((t) => t.id.length))
    console.log(`${'ID'.padEnd(w)}  PLAN        STATUS     NAME`)
    for (const t of data) {
      console.log(`${t.id.padEnd(w)}  ${t.plan.padEnd(10)}  ${t.status.padEnd(9)}  ${t.name}`)
    }
  },
})

const showCmd = defineCommand({
  meta: { name: 'show', description: 'Show one tenant' },
  args: { ...common, id },
  async run({ args }) {
    show(args, await (await api(args)).call<TenantOut>('GET', `/api/v1/tenants/${args.id}`))
  },
})

const upgrade = defineCommand({
  meta: { name: 'upgrade', description: "Change a tenant's plan (moves its data between tiers)" },
  args: {
    ...common,
    id,
    plan: {
      type: 'positional',
      description: 'free | pro | enterprise | a plan created in billing',
      required: true,
    },
    'database-path': { type: 'string', description: 'enterprise: dedicated database folder' },
  },
  async run({ args }) {
    const client = await api(args)
    if (!args.json) consola.start(`moving ${args.id} to the ${args.plan} plan…`)
    const answer = await client.call<TenantOut | JobOut>(
      'PUT',
      `/api/v1/tenants/${args.id}/upgrade`,
      {
        plan: args.plan,
        ...(args['database-path'] ? { database_path: args['database-path'] } : {}),
      },
      RESPOND_ASYNC,
    )
    const t = await followMove(client, args.id, answer)
    if (!args.json)
      consola.success(`${t.id} is on ${t.plan} (${t.isolation}); ${t.moved_rows ?? 0} rows moved`)
    show(args, t)
  },
})

const move = defineCommand({
  meta: {
    name: 'move',
    description:
      'Move a tenant to another instance of a service that runs as several (reads keep working)',
  },
  args: {
    ...common,
    id,
    to: { type: 'string', description: 'the instance URL, as discovery lists it', required: true },
    service: { type: 'string', description: 'the partitioned service', default: 'analytics' },
  },
  async run({ args }) {
    const client = await api(args)
    if (!args.json) consola.start(`moving ${args.id}'s ${args.service} data to ${args.to}…`)
    type Moved = { moved: boolean; from: string; rows: number; replayed: number }
    const answer = await client.call<Moved | JobOut>(
      'POST',
      `/api/v1/tenants/${args.id}/instances`,
      {
        service: args.service,
        instance: args.to,
      },
      RESPOND_ASYNC,
    )
    const r = await followMove(client, args.id, answer)
    if (args.json) return console.log(JSON.stringify(r, null, 2))
    if (!r.moved) return consola.info(`${args.id} is on ${args.to} already`)
    consola.success(
      `${args.id} moved from ${r.from} to ${args.to}: ${r.rows} rows, ${r.replayed} events replayed`,
    )
  },
})

const status = (verb: 'suspend' | 'resume', description: string) =>
  defineCommand({
    meta: { name: verb, description },
    args: { ...common, id },
    async run({ args }) {
      const t = await (await api(args)).call<TenantOut>(
        'POST',
        `/api/v1/tenants/${args.id}/${verb}`,
      )
      if (args.json) return console.log(JSON.stringify(t, null, 2))
      consola.success(`${t.id} is ${t.status}`)
    },
  })

const features = defineCommand({
  meta: {
    name: 'features',
    description: `Show or set feature flags: ${featureNames.join(', ')} = on|off|default`,
  },
  args: {
    ...common,
    id,
    set: { type: 'positional', description: 'e.g. advanced_analytics=on', required: false },
  },
  async run({ args }) {
    // Every positional after the tenant id is one flag=value.
    const body = parseFeatureSettings((args._ as string[]).slice(1))
    const sets = Object.keys(body)
    const client = await api(args)
    const path = `/api/v1/tenants/${args.id}/features`
    const out = await client.call<{ features: Record<string, boolean> }>(
      sets.length ? 'PUT' : 'GET',
      path,
      sets.length ? body : undefined,
    )
    if (args.json) return console.log(JSON.stringify(out, null, 2))
    for (const [k, v] of Object.entries(out.features))
      console.log(`${k.padEnd(20)} ${v ? 'on' : 'off'}`)
  },
})

const VALUES: Record<string, boolean | null> = {
  on: true,
  true: true,
  off: false,
  false: false,
  default: null,
}

/**
 * `flag=value` pairs to the features body, refusing (one line, exit 1) a flag the plans do not
 * know or a value other than on/off/true/false/default, before anything is sent.
 */
export function parseFeatureSettings(pairs: string[]): Record<string, boolean | null> {
  const body: Record<string, boolean | null> = {}
  for (const pair of pairs) {
    if (!pair.includes('=')) fail(`'${pair}' is not flag=value, e.g. advanced_analytics=on`)
    const [flag = '', value = ''] = pair.split('=', 2)
    if (!(featureNames as readonly string[]).includes(flag))
      fail(`unknown feature '${flag}': the features are ${featureNames.join(', ')}`)
    if (!(value.toLowerCase() in VALUES))
      fail(`${flag}=${value}: the value must be one of ${Object.keys(VALUES).join(', ')}`)
    body[flag] = VALUES[value.toLowerCase()]!
  }
  return body
}

const remove = defineCommand({
  meta: { name: 'delete', description: 'Erase a tenant: its data, folder and users' },
  args: {
    ...common,
    id,
    confirm: { type: 'string', description: 'repeat the tenant id to confirm', required: true },
  },
  async run({ args }) {
    if (args.confirm !== args.id) fail(`--confirm must repeat the tenant id (${args.id})`)
    const client = await api(args)
    if (!args.json) consola.start(`erasing ${args.id}…`)
    const out = await client.call<{ rows_erased: number; users_removed: number }>(
      'DELETE',
      `/api/v1/tenants/${args.id}?confirm=${encodeURIComponent(args.confirm)}`,
    )
    if (args.json) return console.log(JSON.stringify(out, null, 2))
    consola.success(
      `${args.id} erased (${out.rows_erased} shared rows, ${out.users_removed} users)`,
    )
  },
})

export default defineCommand({
  meta: { name: 'tenant', description: 'Manage tenants through the running platform (operator)' },
  subCommands: {
    create,
    list,
    show: showCmd,
    upgrade,
    move,
    suspend: status('suspend', 'Suspend a tenant (reads keep working)'),
    resume: status('resume', 'Resume a suspended tenant'),
    features,
    delete: remove,
  },
})
