import { type TSchema, t } from 'elysia'

/**
 * The list envelope every collection answers with (DESIGN §11): `{data, next_cursor, has_more}`.
 *
 * @example
 * response: { 200: listOf(Plan) }
 * return wholeList(plans)
 */
export function listOf<T extends TSchema>(item: T) {
  return t.Object({
    data: t.Array(item),
    next_cursor: t.Nullable(t.String()),
    has_more: t.Boolean(),
  })
}

/** A list that fits in one page: no cursor, nothing more. */
export function wholeList<T>(data: T[]): { data: T[]; next_cursor: null; has_more: false } {
  return { data, next_cursor: null, has_more: false }
}
