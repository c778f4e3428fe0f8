import type { Db } from '../kernel/db.ts'

/**
 * Rows per statement execution on the insert path: one execution of a 50-row INSERT costs SQLite
 * one statement start (cursors opened on the table and its indexes) and bun:sqlite one call,
 * where 50 one-row executions cost 50 of each. SQLite inserts the VALUES rows in order, each
 * seeing the ones before it (an upsert of a key twice in one statement adds up as two would).
 */
export const CHUNK = 50

/** head → tail → row count → SQL (the heads and tails are a few constants). */
const sqls = new Map<string, Map<string, string[]>>()

/** `INSERT … VALUES (?, …), (?, …) …` for `n` rows of `width` values, then `tail`. */
function sqlFor(head: string, width: number, n: number, tail: string): string {
  let byTail = sqls.get(head)
  if (!byTail) {
    byTail = new Map()
    sqls.set(head, byTail)
  }
  let byCount = byTail.get(tail)
  if (!byCount) {
    byCount = []
    byTail.set(tail, byCount)
  }
  let sql = byCount[n]
  if (sql === undefined) {
    const row = `(${Array(width).fill('?').join(', ')})`
    sql = `${head} VALUES ${Array(n).fill(row).join(', ')}${tail ? ` ${tail}` : ''}`
    byCount[n] = sql
  }
  return sql
}

/**
 * Runs `head VALUES (…) tail` for the rows whose values `values` holds one after another
 * (`width` a row), CHUNK rows per execution. The statements are prepared once per connection
 * (bun:sqlite's query cache), one for CHUNK rows and one per shorter remainder.
 */
export function insertMany(
  db: Db,
  {
    head,
    width,
    tail,
    values,
  }: { head: string; width: number; tail: string; values: readonly unknown[] },
): void {
  const rows = values.length / width
  for (let at = 0; at < rows; at += CHUNK) {
    const n = Math.min(CHUNK, rows - at)
    const args = values.slice(at * width, (at + n) * width)
    db.sqlite.query(sqlFor(head, width, n, tail)).run(...(args as never[]))
  }
}

/**
 * `insertMany` for an `INSERT OR IGNORE` of at most CHUNK rows, inside a savepoint: true when it
 * inserted every row. Otherwise the savepoint is rolled back (nothing of it stays) and false
 * tells the caller to insert the rows one by one.
 */
export function insertedAll(
  db: Db,
  head: string,
  width: number,
  values: readonly unknown[],
): boolean {
  const rows = values.length / width
  const sqlite = db.sqlite
  sqlite.query('SAVEPOINT insert_many').run()
  const changes = sqlite.query(sqlFor(head, width, rows, '')).run(...(values as never[])).changes
  if (changes !== rows) sqlite.query('ROLLBACK TO insert_many').run()
  sqlite.query('RELEASE insert_many').run()
  return changes === rows
}
