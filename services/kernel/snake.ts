/** `tenantId` → `tenant_id`, as a type. */
export type Snake<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<T>}`
  : S

/** The named fields of a row under their snake_case API names. */
export type SnakeFields<T, K extends keyof T & string> = { [P in K as Snake<P>]: T[P] }

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * A row's fields as the API names them (DESIGN §11: snake_case), for the columns that go out
 * unchanged; a rename of the column fails to compile where the field is read. Keep a view's keys
 * in its response schema's order (spread in runs around the computed fields): Elysia answers in
 * the schema's order, but an idempotent replay answers the stored value in the order returned, and
 * a replay must send the same bytes.
 *
 * @example
 * snakeFields(row, ['id', 'tenantId', 'createdAt']) // { id, tenant_id, created_at }
 */
export function snakeFields<T extends object, K extends keyof T & string>(
  row: T,
  keys: readonly K[],
): SnakeFields<T, K> {
  const out: Record<string, unknown> = {}
  for (const key of keys) out[snake(key)] = row[key]
  return out as SnakeFields<T, K>
}
