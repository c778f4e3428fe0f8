import { defineCommand } from 'citty'
import { consola } from 'consola'
import { clientArgs, operatorApi } from './client.ts'
import { proofLine } from './import.ts'
import { configArgs, configFromArgs, jsonArg, printJson, tenantArg } from './shared.ts'

interface ImportRecord {
  import_id: string
  file_name: string | null
  created_at: string
  read: number | null
  accepted: number
  duplicates: number
  rejected: number
  skipped: number
  layout: string | null
  proof: Parameters<typeof proofLine>[0] | null
}

/** `mmp imports --tenant T`: the statements imported, newest first, each with its proof. */
export default defineCommand({
  meta: {
    name: 'imports',
    description:
      "List a tenant's statement imports (dashboard, API and `mmp import`), newest first, with their proof",
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...tenantArg,
    ...jsonArg,
    limit: { type: 'string', description: 'how many (1 to 100)', default: '20' },
  },
  async run({ args }) {
    const api = await operatorApi(configFromArgs(args), args.url)
    const q = `tenant_id=${encodeURIComponent(args.tenant)}&limit=${encodeURIComponent(args.limit)}`
    const { data } = await api.call<{ data: ImportRecord[] }>('GET', `/api/v1/statements?${q}`)
    if (args.json) return printJson(data)
    if (data.length === 0) return consola.info(`${args.tenant} has imported no statement yet`)
    for (const i of data) {
      console.log(
        `${i.import_id}  ${i.created_at}  ${i.file_name ?? '(no name)'}  ${i.layout ?? '?'}: ${i.read ?? '?'} read, ${i.accepted} accepted, ${i.duplicates} duplicates, ${i.rejected} rejected, ${i.skipped} skipped`,
      )
      if (i.proof) console.log(`  ${proofLine(i.proof)}`)
    }
  },
})
