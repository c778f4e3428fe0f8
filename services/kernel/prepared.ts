import type { Db } from './db.ts'

/** A statement prepared on a database's SQLite handle. */
export type Statement = ReturnType<Db['sqlite']['prepare']>

/**
 * Statements prepared once per open database, for write paths that run them for every row. A
 * handle reopened after a release is a new `Db`, so its statements are prepared again.
 *
 * @example
 * const statementsOf = preparedPerDb({ insert: INSERT_SQL, select: SELECT_SQL })
 * statementsOf(db).insert.run(...values)
 */
export function preparedPerDb<K extends string>(
  sql: Record<K, string>,
): (db: Db) => Record<K, Statement> {
  const prepared = new WeakMap<Db, Record<K, Statement>>()
  return (db) => {
    let statements = prepared.get(db)
    if (!statements) {
      statements = {} as Record<K, Statement>
      for (const key of Object.keys(sql) as K[]) statements[key] = db.sqlite.prepare(sql[key])
      prepared.set(db, statements)
    }
    return statements
  }
}
