import { existsSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { toMajor } from '../services/kernel/index.ts'
import { isPdf, readStatement, statementAnswer } from '../services/parser/public.ts'
import { type CliApi, clientArgs, fail, operatorApi } from './client.ts'
import { configArgs, configFromArgs, jsonArg, printJson } from './shared.ts'

const BATCH = 1000

/** A one-line progress bar on stderr (nothing when stderr is not a terminal but the summary). */
export function progressBar(label: string, total: number) {
  const tty = process.stderr.isTTY
  let last = 0
  return {
    update(done: number, extra = '') {
      const now = performance.now()
      if (!tty || (now - last < 80 && done < total)) return
      last = now
      const ratio = total > 0 ? Math.min(1, done / total) : 0
      const width = 30
      const fill = Math.round(ratio * width)
      process.stderr.write(
        `\r${label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${done}/${total} ${extra}`,
      )
    },
    done() {
      if (tty) process.stderr.write('\n')
    },
  }
}

export interface Totals {
  accepted: number
  duplicates: number
  rejected: number
  skipped: number
  errors: Array<{ row?: number; index?: number; field?: string; message: string }>
}

/** Sends one batch through the gateway as the operator, for the named tenant. */
export async function sendBatch(
  api: CliApi,
  tenant: string,
  transactions: unknown[],
  totals: Totals,
  rows?: number[],
  source: 'api' | 'statement' = 'api',
) {
  const r = await api.call<Totals>('POST', '/api/v1/parser/transactions', {
    tenant_id: tenant,
    source,
    transactions,
  })
  totals.accepted += r.accepted
  totals.duplicates += r.duplicates
  totals.rejected += r.rejected
  for (const e of r.errors) {
    if (totals.errors.length < 20)
      totals.errors.push(
        rows && e.index !== undefined
          ? { row: rows[e.index], field: e.field, message: e.message }
          : e,
      )
  }
}

async function countLines(path: string): Promise<number> {
  let n = 0
  for await (const chunk of Bun.file(path).stream()) {
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) n++
  }
  return n
}

export default defineCommand({
  meta: {
    name: 'import',
    description:
      'Import an M-Pesa statement (CSV, or the PDF Safaricom emails) for a tenant through the running platform',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    ...jsonArg,
    file: {
      type: 'positional',
      description: 'M-Pesa full statement: CSV, or the emailed PDF',
      required: true,
    },
    password: {
      type: 'string',
      description: "the statement PDF's password (usually the ID number it was requested with)",
    },
    tenant: { type: 'string', description: 'tenant id to import into', required: true },
    timezone: {
      type: 'string',
      description: 'time zone of the statement times',
      default: 'Africa/Nairobi',
    },
  },
  async run({ args }) {
    const path = String(args.file)
    if (!existsSync(path) || !statSync(path).isFile()) fail(`no such file: ${path}`)
    const config = configFromArgs(args)
    const api = await operatorApi(config, args.url)
    const file = Bun.file(path)
    // A PDF is read page by page: its bar counts pages; a CSV's counts lines.
    const pdf = await isPdf(file)
    let total = pdf ? 1 : Math.max(1, await countLines(path))
    let bar = progressBar(basename(path), total)
    const totals: Totals = { accepted: 0, duplicates: 0, rejected: 0, skipped: 0, errors: [] }
    let batch: unknown[] = []
    let rows: number[] = []
    let done = 0
    const flush = async () => {
      if (batch.length === 0) return
      await sendBatch(api, args.tenant, batch, totals, rows, 'statement')
      batch = []
      rows = []
      bar.update(done, `accepted ${totals.accepted}`)
    }
    let read: Awaited<ReturnType<typeof readStatement>>
    try {
      read = await readStatement(file, {
        timeZone: args.timezone,
        password: args.password,
        onPage: (page, pages) => {
          if (page === 1) {
            total = pages
            bar = progressBar(basename(path), total)
          }
          done = page
          bar.update(done, `accepted ${totals.accepted}`)
        },
        onChunk: async (c) => {
          totals.skipped += c.skipped
          totals.rejected += c.errors.length
          for (const e of c.errors) if (totals.errors.length < 20) totals.errors.push(e)
          for (const [i, t] of c.transactions.entries()) {
            batch.push({
              occurred_at: t.occurredAt,
              amount: toMajor(t.amount!),
              direction: t.direction,
              counterparty_name: t.counterpartyName,
              counterparty_phone: t.counterpartyPhone,
              description: t.description,
              receipt_number: t.receiptNumber,
              balance: t.balance === null ? null : toMajor(t.balance),
              ...(t.kind ? { kind: t.kind } : {}),
              ...(t.leg !== undefined ? { leg: t.leg } : {}),
            })
            rows.push(c.rows[i]!)
            if (!pdf) done = c.rows[i]!
            if (batch.length >= BATCH) await flush()
          }
        },
      })
    } catch (err) {
      bar.done()
      // The reader's refusals (no statement table, a PDF's password) are the user's to fix.
      if ((err as { code?: string }).code) fail((err as Error).message)
      throw err
    }
    await flush()
    bar.update(total)
    bar.done()
    const statement = statementAnswer(read)
    // Every row of the file is in one counter: read = accepted + duplicates + rejected + skipped.
    const problem =
      totals.rejected > 0
        ? `${totals.rejected} of ${statement.read} rows were rejected`
        : statement.proof.verdict === 'does_not_add_up'
          ? (statement.proof.finding ?? 'the statement does not add up')
          : null
    if (args.json) {
      printJson({ tenant_id: args.tenant, ...totals, ...statement })
    } else {
      for (const e of totals.errors)
        consola.warn(`row ${e.row ?? e.index}: ${e.field ? `${e.field}: ` : ''}${e.message}`)
      // The summary is the command's output: plain stdout, whatever consola's level.
      console.log(
        `${args.tenant}: ${statement.layout_name}, ${statement.read} rows read: ${totals.accepted} accepted, ${totals.duplicates} duplicates, ${totals.rejected} rejected, ${totals.skipped} skipped (moved no money)`,
      )
      console.log(proofLine(statement.proof))
    }
    // A script learns from the exit code that the import is not the whole statement.
    if (problem) {
      process.stderr.write(`mmp import: ${problem}\n`)
      process.exitCode = 1
    }
  },
})

/** The proof in one line: whether the rows reproduce the file's totals and balance. */
function proofLine(p: ReturnType<typeof statementAnswer>['proof']): string {
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
