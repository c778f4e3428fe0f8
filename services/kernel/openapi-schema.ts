/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it) as plain data. */
export type JsonSchema = Record<string, unknown>

const MAP_KEYS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'] as const
const LIST_KEYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const
const ONE_KEYS = ['items', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else'] as const

const isObject = (v: unknown): v is JsonSchema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A copy of `schema` with `fn` applied bottom-up to it and every subschema (properties, items,
 * unions, …); `fn` gets each schema after its children were mapped.
 *
 * @example
 * mapSchema(s, (x) => ({ ...x, description: undefined }))
 */
export function mapSchema(schema: unknown, fn: (s: JsonSchema) => JsonSchema): unknown {
  if (!isObject(schema)) return schema
  const out: JsonSchema = { ...schema }
  for (const key of MAP_KEYS) {
    const map = out[key]
    if (isObject(map))
      out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, mapSchema(v, fn)]))
  }
  for (const key of LIST_KEYS) {
    const list = out[key]
    if (Array.isArray(list)) out[key] = list.map((v) => mapSchema(v, fn))
  }
  for (const key of ONE_KEYS) if (isObject(out[key])) out[key] = mapSchema(out[key], fn)
  return fn(out)
}

/** Elysia's coercing numbers: a string branch (`format: integer|numeric`) beside the number. */
const isCoercedString = (s: unknown): boolean =>
  isObject(s) && s.type === 'string' && (s.format === 'integer' || s.format === 'numeric')
const isNumeric = (s: unknown): boolean =>
  isObject(s) && (s.type === 'integer' || s.type === 'number')
const isNull = (s: unknown): boolean => isObject(s) && s.type === 'null'

/** Allows `null` the OpenAPI 3.1 way (a type list or a null branch), in place of `nullable`. */
function allowNull(s: JsonSchema): JsonSchema {
  const out = { ...s }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  if (typeof out.type === 'string') out.type = out.type === 'null' ? 'null' : [out.type, 'null']
  else if (Array.isArray(out.type)) {
    if (!out.type.includes('null')) out.type = [...out.type, 'null']
  } else if (Array.isArray(out.anyOf)) {
    if (!out.anyOf.some(isNull)) out.anyOf = [...out.anyOf, { type: 'null' }]
  } else if (Array.isArray(out.oneOf)) {
    if (!out.oneOf.some(isNull)) out.oneOf = [...out.oneOf, { type: 'null' }]
  } else if (Object.keys(out).length) return { anyOf: [out, { type: 'null' }] }
  return out
}

/** One schema node, its children already normalised (see `normalizeSchema`). */
function normalizeNode(s: JsonSchema): JsonSchema {
  let out = s
  for (const key of ['anyOf', 'oneOf'] as const) {
    const union = out[key]
    if (!Array.isArray(union) || !union.some(isNumeric)) continue
    // Children are mapped first, so the string branch may already read as a plain number.
    const numbers = union.filter((b) => isCoercedString(b) || isNumeric(b))
    const others = union.filter((b) => !numbers.includes(b))
    if (numbers.length < 2 || others.some((b) => !isNull(b))) continue
    const { [key]: _, ...rest } = out
    const best =
      numbers.find((b) => isObject(b) && b.type === 'integer') ??
      numbers.filter((b) => !isCoercedString(b)).at(-1) ??
      numbers.at(-1)
    out = { ...rest, ...(best as JsonSchema) }
    if (others.length) out = allowNull(out)
  }
  if (out.type === 'string' && (out.format === 'integer' || out.format === 'numeric')) {
    const { format, default: _, ...rest } = out
    out = { ...rest, type: format === 'integer' ? 'integer' : 'number' }
  }
  if ('nullable' in out) {
    const { nullable, ...rest } = out
    out = nullable === true ? allowNull(rest) : rest
  }
  if (out.type === 'number' && out.multipleOf === 1) out = { ...out, type: 'integer' }
  if (out.type === 'integer' && out.multipleOf === 1) {
    const { multipleOf: _, ...rest } = out
    out = rest
  }
  return out
}

/**
 * A schema as OpenAPI 3.1 and its clients read it: Elysia's coercing numbers (a
 * `string` with `format: integer|numeric` beside the number) become plain `integer` or `number`,
 * and `nullable: true` (3.0) becomes a `null` type or branch. Idempotent.
 *
 * @example
 * normalizeSchema({ anyOf: [{ type: 'string', format: 'integer' }, { type: 'integer' }] })
 * // { type: 'integer' }
 */
export function normalizeSchema(schema: unknown): unknown {
  return mapSchema(schema, normalizeNode)
}
