import { defineCommand } from 'citty'
import { consola } from 'consola'
import type { ApiKeyView } from '../schema/auth/views.ts'
import { type CliApi, fail, operatorApi } from './client.ts'
import { configFromArgs, printJson, roleArg, tenantCommandArgs } from './shared.ts'

const common = tenantCommandArgs

/** The key itself comes only in the answer to its creation. */
type KeyOut = ApiKeyView & { key?: string }

/** The tenant's live API keys (never the keys themselves). */
async function liveKeys(api: CliApi, tenant: string): Promise<KeyOut[]> {
  const { data } = await api.call<{ data: KeyOut[] }>(
    'GET',
    `/api/v1/auth/api-keys?tenant_id=${encodeURIComponent(tenant)}`,
  )
  return data
}

const create = defineCommand({
  meta: { name: 'create', description: 'Create a secret API key for a server (shown once)' },
  args: {
    ...common,
    name: { type: 'positional', description: 'what the key is for', required: true },
    ...roleArg,
    'expires-at': { type: 'string', description: 'ISO 8601 date-time; none: never expires' },
  },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    const k = await api.call<KeyOut>('POST', '/api/v1/auth/api-keys', {
      tenant_id: args.tenant,
      name: args.name,
      role: args.role,
      ...(args['expires-at'] ? { expires_at: args['expires-at'] } : {}),
    })
    if (args.json) return printJson(k)
    consola.success(`${k.name}: ${k.role} key ${k.id} for ${args.tenant}`)
    console.log(`key (shown once, store it now): ${k.key}`)
    if (k.expires_at) console.log(`expires at: ${k.expires_at}`)
  },
})

const list = defineCommand({
  meta: { name: 'list', description: "List a tenant's live API keys (never the key itself)" },
  args: { ...common },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    const data = await liveKeys(api, args.tenant)
    if (args.json) return printJson(data)
    if (data.length === 0) return consola.info(`${args.tenant} has no API keys`)
    for (const k of data)
      console.log(
        `${k.id}  ${k.prefix}…  ${k.role.padEnd(8)} last used ${k.last_used_at ?? 'never'}` +
          `${k.expires_at ? `, expires ${k.expires_at}` : ''}  ${k.name}`,
      )
  },
})

const revoke = defineCommand({
  meta: { name: 'revoke', description: 'Revoke an API key; it stops at once everywhere' },
  args: { ...common, id: { type: 'positional', description: 'key id (key_…)', required: true } },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    // The operator may revoke any tenant's key: check it is the named tenant's, against typos.
    const data = await liveKeys(api, args.tenant)
    if (!data.some((k) => k.id === args.id)) fail(`${args.tenant} has no live API key ${args.id}`)
    await api.call('DELETE', `/api/v1/auth/api-keys/${encodeURIComponent(args.id)}`)
    if (args.json) return printJson({ id: args.id, revoked: true })
    consola.success(`${args.id} revoked`)
  },
})

export default defineCommand({
  meta: {
    name: 'apikey',
    description: "Manage a tenant's secret API keys through the running platform (operator)",
  },
  subCommands: { create, list, revoke },
})
