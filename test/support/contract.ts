import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { RecordedExchange } from './platform.ts'

type Obj = Record<string, unknown>
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Every object schema closed (`unevaluatedProperties: false` where it lists properties and says
 * nothing of others), so a field the document does not name fails the check.
 */
function closeObjects(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(closeObjects)
  if (!isObject(v)) return v
  const out: Obj = {}
  for (const [k, x] of Object.entries(v)) out[k] = k === 'example' ? x : closeObjects(x)
  if (
    isObject(out.properties) &&
    out.additionalProperties === undefined &&
    out.patternProperties === undefined &&
    out.unevaluatedProperties === undefined
  )
    out.unevaluatedProperties = false
  return out
}

const pointerOf = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * Checks answers against an OpenAPI 3.1 document with Ajv (draft 2020-12): the status must be
 * documented for the operation (or covered by `default`), and a JSON body must match its schema
 * with no field the schema does not name. Returns one sentence per violation.
 *
 * @example
 * const check = contractChecker(await (await fetch(`${p.gateway}/openapi.json`)).json())
 * expect(check(exchange)).toEqual([])
 */
export function contractChecker(doc: Obj) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema({ $id: 'mmp', ...(closeObjects(doc) as Obj) })
  const paths = Object.keys((doc.paths ?? {}) as Obj).map((path) => ({
    path,
    re: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    fixed: path.split('/').filter((s) => !s.startsWith('{')).length,
  }))
  const templateOf = (path: string) =>
    paths.filter((p) => p.re.test(path.split('?')[0]!)).sort((a, b) => b.fixed - a.fixed)[0]?.path

  return (e: RecordedExchange): string[] => {
    const what = `${e.method} ${e.path} → ${e.status}`
    const template = templateOf(e.path)
    if (!template) return [`${what}: the path is not documented`]
    const method = e.method.toLowerCase()
    const op = ((doc.paths as Obj)[template] as Obj)?.[method] as Obj | undefined
    if (!op) return [`${what}: ${method} ${template} is not documented`]
    const responses = op.responses as Obj
    const status = String(e.status)
    const key =
      status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default'
    const response = responses[key] as Obj | undefined
    if (!response || (key === 'default' && e.status < 400))
      return [`${what}: status ${status} is not documented for ${method} ${template}`]
    const content = response.content as Obj | undefined
    if (!content)
      return e.body === null || e.body === '' ? [] : [`${what}: a body where none is documented`]
    const type = (e.contentType ?? '').split(';')[0]!.trim()
    const mediaType = type in content ? type : Object.keys(content)[0]!
    if (!mediaType.includes('json')) return []
    const pointer = `mmp#/paths/${pointerOf(template)}/${method}/responses/${key}/content/${pointerOf(mediaType)}/schema`
    const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer })
    if (validate(e.body)) return []
    return [
      `${what}: the body does not match ${method} ${template} ${key}: ${(validate.errors ?? [])
        .map((x) => {
          const extra = (x.params as { unevaluatedProperty?: string }).unevaluatedProperty
          return `${x.instancePath || '(body)'} ${x.message}${extra ? ` (${extra})` : ''}`
        })
        .join('; ')} — ${JSON.stringify(e.body).slice(0, 300)}`,
    ]
  }
}
