import { defineCommand } from 'citty'
import { consola } from 'consola'
import { operatorApi } from './client.ts'
import { configFromArgs, printJson, roleArg, tenantCommandArgs } from './shared.ts'

const common = tenantCommandArgs

interface UserOut {
  id: string
  email: string
  role: string
  status: string
  invite_token?: string
  invite_url?: string
  expires_at?: string
}

const invite = defineCommand({
  meta: { name: 'invite', description: 'Invite a user into a tenant' },
  args: {
    ...common,
    email: { type: 'positional', description: 'email address', required: true },
    ...roleArg,
  },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    const u = await api.call<UserOut>('POST', `/api/v1/tenants/${args.tenant}/users`, {
      email: args.email,
      role: args.role,
    })
    if (args.json) return printJson(u)
    consola.success(`${u.email} invited as ${u.role} (${u.id})`)
    if (u.invite_token) {
      console.log(`send them this link to set a password: ${u.invite_url ?? u.invite_token}`)
      console.log(`expires at: ${u.expires_at}`)
    }
  },
})

const list = defineCommand({
  meta: { name: 'list', description: "List a tenant's users" },
  args: { ...common },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    const { data } = await api.call<{ data: UserOut[] }>(
      'GET',
      `/api/v1/tenants/${args.tenant}/users`,
    )
    if (args.json) return printJson(data)
    if (data.length === 0) return consola.info(`${args.tenant} has no users`)
    for (const u of data)
      console.log(`${u.id}  ${u.role.padEnd(8)} ${u.status.padEnd(8)} ${u.email}`)
  },
})

const remove = defineCommand({
  meta: { name: 'remove', description: 'Remove a user from a tenant' },
  args: { ...common, id: { type: 'positional', description: 'user id (usr_…)', required: true } },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    await api.call('DELETE', `/api/v1/tenants/${args.tenant}/users/${args.id}`)
    if (args.json) return printJson({ id: args.id, tenant_id: args.tenant, removed: true })
    consola.success(`${args.id} removed from ${args.tenant}`)
  },
})

export default defineCommand({
  meta: {
    name: 'user',
    description: "Manage a tenant's users through the running platform (operator)",
  },
  subCommands: { invite, list, remove },
})
