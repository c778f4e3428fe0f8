import { existsSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import type { StatementAnswer } from '../services/parser/public.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { progressBar } from './progress.ts'
import { configArgs, configFromArgs, jsonArg, printJson } from './shared.ts'

/** backup.ts and demo.ts draw the same bar. */
export { progressBar } from './progress.ts'

type Proof = StatementAnswer['proof']

interface Problem {
  code?: string
  detail?: string
  title?: string
}

/** What the CLI says instead of the API's words where they name a form field. */
const cliWords: Record<string, string> = {
  STATEMENT_PASSWORD_REQUIRED:
    'the statement PDF is password-protected: pass --password (Safaricom uses the ID number the statement was requested with)',
}

export default defineCommand({
  meta: {
    name: 'import',
    description:
      'Import an M-Pesa statement (PDF, CSV, XLS or XLSX) for a tenant through the running platform; recorded with its proof like a dashboard import',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...jsonArg,
    file: {
      type: 'positional',
      description:
        'M-Pesa statement: the emailed PDF, the app statement, a CSV, or an org-portal export',
      required: true,
    },
    password: {
      type: 'string',
      description: "the statement PDF's password (usually the ID number it was requested with)",
    },
    tenant: { type: 'string', description: 'tenant id to import into', required: true },
  },
  async run({ args }) {
    const path = String(args.file)
    if (!existsSync(path) || !statSync(path).isFile()) fail(`no such file: ${path}`)
    const api = await operatorApi(configFromArgs(args), args.url)
    // The same door as the dashboard's Import: the platform reads the file in the tenant's time
    // zone, stores the import with its proof (GET /api/v1/statements lists it) and answers it.
    const bar = progressBar(basename(path), statSync(path).size)
    const fields: Record<string, string> = { tenant_id: args.tenant }
    if (args.password) fields.password = args.password
    const r = await api
      .upload<StatementAnswer & Problem>('/api/v1/statements', path, fields, (sent) =>
        bar.update(sent, 'sent'),
      )
      .finally(() => bar.done())
    if (r.status !== 201) {
      const p = (r.body ?? {}) as Problem
      fail(cliWords[p.code ?? ''] ?? p.detail ?? p.title ?? `the platform answered ${r.status}`)
    }
    const s = r.body
    const problem =
      s.rejected > 0
        ? `${s.rejected} of ${s.read} rows were rejected`
        : s.proof.verdict === 'does_not_add_up'
          ? (s.proof.finding ?? 'the statement does not add up')
          : null
    if (args.json) {
      printJson({ tenant_id: args.tenant, ...s })
    } else {
      for (const e of s.errors.slice(0, 20))
        consola.warn(`row ${e.row ?? e.index}: ${e.field ? `${e.field}: ` : ''}${e.message}`)
      if (s.errors.length > 20) consola.warn(`… and ${s.errors.length - 20} more rejected rows`)
      // The summary is the command's output: plain stdout, whatever consola's level.
      console.log(
        `${args.tenant}: ${s.layout_name}, ${s.read} rows read: ${s.accepted} accepted, ${s.duplicates} duplicates, ${s.rejected} rejected, ${s.skipped} skipped (moved no money)`,
      )
      console.log(proofLine(s.proof))
      console.log(
        `recorded as import ${s.import_id} (see them with: mmp imports --tenant ${args.tenant})`,
      )
    }
    // A script learns from the exit code that the import is not the whole statement.
    if (problem) {
      process.stderr.write(`mmp import: ${problem}\n`)
      process.exitCode = 1
    }
  },
})

/** The proof in one line: whether the rows reproduce the file's totals and balance. */
export function proofLine(p: Proof): string {
  if (p.verdict === 'proven') {
    const what = [
      p.totals.match ? "the statement's totals" : null,
      p.balance.chains ? 'its running balance' : null,
    ].filter(Boolean)
    return `proof: the rows read reproduce ${what.join(' and ')}`
  }
  if (p.verdict === 'unchecked')
    return 'proof: the statement states no totals and has no balance column to check against'
  return `proof: ${p.finding ?? 'the statement does not add up'}`
}
