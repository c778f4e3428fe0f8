import { topics } from '../../schema/events.ts'
import { imports } from '../../schema/parser/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled, readEntitlements } from '../kernel/entitlements.ts'
import { AppError } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { DEFAULT_TIMEZONE } from '../kernel/time-zone.ts'
import type { StatementAnswer } from './model.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { statementAnswer } from './proof-answer.ts'
import { statementReads } from './read-gate.ts'
import { readStatement, statementFormat } from './read-statement.ts'
import { acceptedSince, storeTransactions } from './store.ts'
import { RECEIPT_LEG } from './store-rows.ts'

/** Rows stored per transaction while a statement streams in. */
const WRITE_BATCH = 5000
/** Row errors listed in a response at most; the counts stay exact. */
export const MAX_ERRORS = 1000

type ImportResult = StatementAnswer

interface ImportInput {
  tenantId: string
  userId: string
  file: Blob
  fileName: string | null
  password?: string
  /** Aborted when the client goes away or its deadline passes: reading stops. */
  signal?: AbortSignal
}

export function timeZoneOf(ctx: ServiceContext, tenantId: string): string {
  return ctx.registry.placement(tenantId).timezone ?? DEFAULT_TIMEZONE
}

/**
 * Imports an M-Pesa statement (CSV, or the emailed PDF opened with `password`): read it, store in batches (each with its raw and usage
 * events), then record the import and publish `statements.processed`. Failed rows are skipped and
 * counted; reversal rows are kept as the money movement they are. Re-uploading the same statement
 * accepts nothing twice (receipt numbers). A file that is no statement is refused at once; the
 * others wait for one of the process's statement reads (read-gate.ts: 503 with Retry-After when
 * too many are waiting).
 */
export async function importStatement(
  ctx: ServiceContext,
  input: ImportInput,
): Promise<ImportResult> {
  const { tenantId } = input
  if (ctx.registry.placement(tenantId).features?.bulk_upload === false) {
    throw new AppError(
      'FEATURE_DISABLED',
      `statement upload (bulk_upload) is not enabled for tenant ${tenantId}`,
    )
  }
  assertEntitled(ctx.registry, tenantId, { write: true, metric: 'statements', adding: 1 })
  // A file that is no statement at all is refused before it waits for a read of its own.
  await statementFormat(input.file)
  const leave = await statementReads.enter(input.signal)
  try {
    return await readAndStore(ctx, input)
  } finally {
    leave()
  }
}

async function readAndStore(ctx: ServiceContext, input: ImportInput): Promise<ImportResult> {
  const { tenantId } = input
  const db = ctx.registry.tenant('parser', tenantId)
  const timeZone = timeZoneOf(ctx, tenantId)

  const limit = readEntitlements(ctx.registry, tenantId)?.limits.transactions
  if (typeof limit === 'number') {
    // A finite plan: count the new rows first so a statement is refused whole, not cut midway.
    const known = db.sqlite.query<unknown, [string, string, string]>(RECEIPT_LEG)
    let fresh = 0
    await readStatement(input.file, {
      timeZone,
      password: input.password,
      now: ctx.clock.now().getTime(),
      signal: input.signal,
      onChunk: (c) => {
        for (const t of c.transactions)
          if (!known.get(tenantId, t.receiptNumber!, t.leg ?? '')) fresh++
      },
    })
    assertEntitled(ctx.registry, tenantId, {
      write: true,
      metric: 'transactions',
      adding: fresh,
      ownUse: (since) => acceptedSince(db, tenantId, since),
    })
  }

  const importId = newId('imp')
  const result: ImportResult = {
    import_id: importId,
    accepted: 0,
    duplicates: 0,
    matched: 0,
    rejected: 0,
    skipped: 0,
    errors: [],
    ...statementAnswer({ headerFound: true, rows: 0 }),
  }
  const addErrors = (errors: RowError[]) => {
    result.rejected += errors.length
    for (const e of errors) if (result.errors.length < MAX_ERRORS) result.errors.push(e)
  }
  let pending: Array<{ transaction: ParsedTransaction; ref: { row: number }; id?: string }> = []
  const flush = () => {
    if (pending.length === 0) return
    const r = storeTransactions(ctx, db, {
      tenantId,
      userId: input.userId,
      source: 'statement',
      importId,
      items: pending,
      checkLimit: false,
    })
    pending = []
    result.accepted += r.accepted
    result.duplicates += r.duplicates
    result.matched += r.matched
    result.rejected += r.rejected
    for (const e of r.errors) if (result.errors.length < MAX_ERRORS) result.errors.push(e)
  }
  // Every chunk commits with its events; the relay publishes them once, after the import,
  // instead of waking at each commit while the import still writes (kernel/bulk.ts).
  await ctx.relay.bulk(db, async () => {
    const read = await readStatement(input.file, {
      timeZone,
      password: input.password,
      now: ctx.clock.now().getTime(),
      signal: input.signal,
      ids: true,
      onChunk: (c) => {
        result.skipped += c.skipped
        addErrors(c.errors)
        const { transactions, rows, ids } = c
        for (let i = 0; i < transactions.length; i++) {
          pending.push({ transaction: transactions[i]!, ref: { row: rows[i]! }, id: ids?.[i] })
        }
        if (pending.length >= WRITE_BATCH) flush()
      },
    })
    flush()
    Object.assign(result, statementAnswer(read))
    db.write((orm) => {
      orm
        .insert(imports)
        .values({
          tenantId,
          id: importId,
          fileName: input.fileName,
          accepted: result.accepted,
          duplicates: result.duplicates,
          rejected: result.rejected,
          skipped: result.skipped,
          userId: input.userId,
          createdAt: ctx.clock.now().toISOString(),
          read: result.read,
          layout: result.layout,
          proof: JSON.stringify(result.proof),
        })
        .run()
      emitEvent(
        db,
        {
          topic: topics.statementsProcessed,
          tenantId,
          data: {
            import_id: importId,
            file_name: input.fileName,
            accepted: result.accepted,
            duplicates: result.duplicates,
            matched: result.matched,
            rejected: result.rejected,
            read: result.read,
            skipped: result.skipped,
            verdict: result.proof.verdict,
            finding: result.proof.finding,
          },
        },
        ctx.clock,
      )
      emitEvent(
        db,
        { topic: topics.usage, tenantId, data: { metric: 'statements', quantity: 1 } },
        ctx.clock,
      )
    })
  })
  return result
}
