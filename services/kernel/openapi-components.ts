import { type JsonSchema, mapSchema } from './openapi-schema.ts'

/** A component name: PascalCase, as the models' `title`s are written. */
const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/

/**
 * Hoists every schema with a PascalCase `title` (the models name their resources so:
 * `t.Object({...}, { title: 'Transaction' })`) into `schemas` and returns a `$ref` in its place.
 * Two different shapes under one title keep the second inline and are listed in `clashes`, so
 * a test can fail on them.
 *
 * @example
 * const into = {}
 * hoistSchema({ title: 'Plan', type: 'object' }, into, []) // { $ref: '#/components/schemas/Plan' }
 */
export function hoistSchema(
  schema: unknown,
  into: Record<string, unknown>,
  clashes: string[],
): unknown {
  return mapSchema(schema, (s: JsonSchema) => {
    const name = s.title
    if (typeof name !== 'string' || !COMPONENT_NAME.test(name)) return s
    const { description, ...shape } = s
    const known = into[name]
    if (known === undefined) into[name] = shape
    else if (JSON.stringify(known) !== JSON.stringify(shape)) {
      if (!clashes.includes(name)) clashes.push(name)
      return s
    }
    const ref = { $ref: `#/components/schemas/${name}` }
    return description === undefined ? ref : { ...ref, description }
  })
}
