import Papa from 'papaparse'
import { exportPageBytes } from './csv.ts'
import { sent, sliceCutter, writeSlices } from './csv-slices.ts'
import { EXPORT_SELECT, KEYSET, NEWEST_FIRST } from './stored-sql.ts'
import type { Scope } from './summary.ts'
import { type TransactionFilters, VIEW_FIELDS, whereOf } from './transactions.ts'

/**
 * Rows a page. Small pages keep what a reader holds at once small: a worker's garbage between
 * collections grows with the page (peak RSS of two workers +76 MB at 2,000 rows, +44 MB at 500),
 * and the CPU per row is the same.
 */
const PAGE = 500
/** Rows a slice of a whole-history export (csv-slices.ts); fewer rows stay on this thread. */
const SLICE_ROWS = 50_000
/**
 * Whole-history exports running on worker threads: one at a time, since its two threads already
 * keep two cores busy; another meanwhile is read here, page by page, as a filtered one is.
 */
let threaded = 0
const FILTERS = [
  'direction',
  'kind',
  'leg',
  'category',
  'min_amount',
  'max_amount',
  'phone',
  'q',
] as const

/**
 * The filtered transactions as CSV, streamed page by page, so memory stays at a few pages
 * whatever the row count. Columns are the read-back fields (DESIGN §11). The export of the whole
 * history (no filter, no period, the whole business) past one slice is read and written by
 * worker threads (csv-slices.ts); anything else reads one keyset page at a time here, giving the
 * event loop a turn after each. A direct stream: pages go to the response as they are made, and
 * the writer waits while the client is behind.
 */
export function exportCsv(
  scope: Scope,
  filters: TransactionFilters,
  opts: { sliceRows?: number } = {},
): ReadableStream<Uint8Array> {
  const { sql, args } = whereOf(scope, filters)
  const whole =
    scope.userId === null &&
    scope.range.fromMs === null &&
    scope.range.toMs === null &&
    scope.db.path !== ':memory:' &&
    FILTERS.every((f) => filters[f] === undefined || filters[f] === '')
  const write = async (controller: ReadableStreamDirectController) => {
    if (!(await sent(controller, `${Papa.unparse([VIEW_FIELDS as never])}\r\n`))) return
    const cut =
      whole && threaded === 0
        ? sliceCutter(scope.db.sqlite, sql, args, opts.sliceRows ?? SLICE_ROWS)
        : null
    const first = cut?.()
    if (!cut || !first?.lo) return writePages(controller, scope, sql, args)
    threaded++
    try {
      const rows = { where: sql, args, page: PAGE }
      // An erased tenant (its handle closed for good) fails the export at the next page.
      const gone = () => scope.db.gone
      await writeSlices({ controller, path: scope.db.path, rows, first, cut, gone })
    } finally {
      threaded--
    }
  }
  const source = {
    type: 'direct',
    // The statements prepared for the export live on the tenant's connection, which the
    // registry's LRU may close between two pages to free descriptors: held, it stays open.
    async pull(controller: ReadableStreamDirectController) {
      const release = scope.db.hold()
      try {
        await write(controller)
      } finally {
        release()
      }
    },
  }
  return new ReadableStream(source as never)
}

/** Every page of the rows `where` selects, read and unparsed on this thread. */
async function writePages(
  controller: ReadableStreamDirectController,
  scope: Scope,
  where: string,
  args: unknown[],
): Promise<void> {
  const first = scope.db.sqlite.query(`${EXPORT_SELECT} WHERE ${where} ${NEWEST_FIRST} LIMIT ?`)
  const next = scope.db.sqlite.query(
    `${EXPORT_SELECT} WHERE ${where} AND ${KEYSET} < (?, ?) ${NEWEST_FIRST} LIMIT ?`,
  )
  let after: [string, string] | null = null
  for (;;) {
    const rows = (
      after
        ? next.values(...(args as never[]), after[0], after[1], PAGE)
        : first.values(...(args as never[]), PAGE)
    ) as unknown[][]
    if (rows.length === 0) break
    const last = rows[rows.length - 1]!
    after = [last[1] as string, last[0] as string]
    if (!(await sent(controller, exportPageBytes(rows)))) return
    if (rows.length < PAGE) break
    await new Promise((resolve) => setImmediate(resolve))
  }
  controller.close()
}
