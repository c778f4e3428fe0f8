type Schema = Record<string, unknown>

const isObject = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Values for string properties by name, where the name says what a valid one looks like. */
const BY_NAME: Array<[RegExp, string]> = [
  [/^tenant_id$/, 'acme'],
  [/phone/, '254712345678'],
  [/email/, 'owner@acme.co.ke'],
  [/(^|_)url$/, 'https://hooks.acme.co.ke/mmp'],
  [/_at$|^occurred_at$|^timestamp$/, '2026-01-15T09:30:00.000Z'],
  [/(^|_)(date|day|from|to)$/, '2026-01-15'],
  [/currency/, 'KES'],
  [/shortcode/, '600000'],
  [/account_reference/, 'INV-0042'],
  [/transaction_desc/, 'Invoice 42'],
  [/timezone/, 'Africa/Nairobi'],
]

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-15T09:30:00.000Z',
  date: '2026-01-15',
  email: 'owner@acme.co.ke',
  uri: 'https://hooks.acme.co.ke/mmp',
  uuid: '3f1c2a7e-8b4d-4c1e-9a2f-5d6e7f801234',
}

function fitLength(s: string, schema: Schema): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY
  let out = s
  while (out.length < min) out += 'x'
  return out.slice(0, max)
}

function numberOf(schema: Schema, integer: boolean): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined
  let v = integer ? 1 : 100.5
  if (min !== undefined && v < min) v = min
  if (max !== undefined && v > max) v = max
  return integer ? Math.ceil(v) : v
}

/**
 * A value valid against `schema` (JSON Schema 2020-12 as OpenAPI 3.1 writes it), for operations
 * without a hand-written example: a schema's own `examples`/`example`/`default`/`const`/first enum
 * value wins; `$ref`s are resolved in `components`; strings follow their format, their property
 * name (phones, tenant ids, dates) and their length limits; numbers their bounds.
 *
 * @example
 * exampleOf({ type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 5 } } })
 * // { n: 5 }
 */
export function exampleOf(
  schema: unknown,
  components: Record<string, unknown> = {},
  name = '',
  depth = 0,
): unknown {
  if (!isObject(schema) || depth > 12) return null
  if (typeof schema.$ref === 'string') {
    const target = components[schema.$ref.split('/').pop() ?? '']
    return exampleOf(target, components, name, depth + 1)
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0]
  if (schema.example !== undefined) return schema.example
  if (schema.const !== undefined) return schema.const
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null) ?? schema.enum[0]
  for (const key of ['anyOf', 'oneOf'] as const) {
    const union = schema[key]
    if (Array.isArray(union)) {
      const branch = union.find((b) => !(isObject(b) && b.type === 'null')) ?? union[0]
      return exampleOf(branch, components, name, depth + 1)
    }
  }
  if (Array.isArray(schema.allOf))
    return Object.assign(
      {},
      ...schema.allOf.map((s) => exampleOf(s, components, name, depth + 1) ?? {}),
    )
  const type = Array.isArray(schema.type)
    ? (schema.type.find((t) => t !== 'null') ?? 'null')
    : schema.type
  switch (type) {
    case 'null':
      return null
    case 'boolean':
      return true
    case 'integer':
      return numberOf(schema, true)
    case 'number':
      return numberOf(schema, false)
    case 'string': {
      if (typeof schema.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format]
      if (schema.contentMediaType || schema.format === 'binary') return ''
      const named = BY_NAME.find(([re]) => re.test(name))?.[1]
      return fitLength(named ?? (name ? name.replace(/_/g, '-') : 'text'), schema)
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? Math.max(1, schema.minItems) : 1
      const item = exampleOf(schema.items, components, name, depth + 1)
      return Array.from({ length: n }, () => item)
    }
    default: {
      if (!isObject(schema.properties)) return {}
      const out: Record<string, unknown> = {}
      for (const [key, sub] of Object.entries(schema.properties))
        out[key] = exampleOf(sub, components, key, depth + 1)
      return out
    }
  }
}
