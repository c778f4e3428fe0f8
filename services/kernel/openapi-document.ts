import { type JsonSchema, normalizeSchema } from './openapi-schema.ts'

/** An OpenAPI 3.1 document as plain data (only what the platform reads and writes). */
export type OpenApiDocument = Record<string, unknown> & {
  paths?: Record<string, Record<string, unknown>>
  components?: Record<string, Record<string, unknown>>
  webhooks?: Record<string, Record<string, unknown>>
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

type Obj = Record<string, unknown>
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

function mapContent(content: unknown, fn: (s: unknown) => unknown): unknown {
  if (!isObject(content)) return content
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      isObject(media) && 'schema' in media ? { ...media, schema: fn(media.schema) } : media,
    ]),
  )
}

function mapHeaders(headers: unknown, fn: (s: unknown) => unknown): unknown {
  if (!isObject(headers)) return headers
  return Object.fromEntries(
    Object.entries(headers).map(([name, h]) => [
      name,
      isObject(h) && 'schema' in h ? { ...h, schema: fn(h.schema) } : h,
    ]),
  )
}

/** An operation with `fn` applied to each schema it holds (parameters, body, responses). */
export function mapOperationSchemas(op: Obj, fn: (s: unknown) => unknown): Obj {
  const out: Obj = { ...op }
  if (Array.isArray(out.parameters))
    out.parameters = out.parameters.map((p) =>
      isObject(p) && 'schema' in p ? { ...p, schema: fn(p.schema) } : p,
    )
  if (isObject(out.requestBody))
    out.requestBody = { ...out.requestBody, content: mapContent(out.requestBody.content, fn) }
  if (isObject(out.responses))
    out.responses = Object.fromEntries(
      Object.entries(out.responses).map(([status, r]) => [
        status,
        isObject(r)
          ? {
              ...r,
              ...(r.content ? { content: mapContent(r.content, fn) } : {}),
              ...(r.headers ? { headers: mapHeaders(r.headers, fn) } : {}),
            }
          : r,
      ]),
    )
  return out
}

/**
 * The document with `fn` applied to every schema in it: each operation's parameters, bodies
 * and responses (paths and webhooks) and `components.schemas`.
 */
export function mapDocumentSchemas<D extends OpenApiDocument>(
  doc: D,
  fn: (s: unknown) => unknown,
): D {
  const mapPaths = (paths: Record<string, Record<string, unknown>> | undefined) =>
    paths &&
    Object.fromEntries(
      Object.entries(paths).map(([path, item]) => [
        path,
        Object.fromEntries(
          Object.entries(item).map(([method, op]) => [
            method,
            HTTP_METHODS.includes(method) && isObject(op) ? mapOperationSchemas(op, fn) : op,
          ]),
        ),
      ]),
    )
  const out: D = { ...doc }
  if (doc.paths) out.paths = mapPaths(doc.paths)
  if (doc.webhooks) out.webhooks = mapPaths(doc.webhooks)
  const schemas = doc.components?.schemas
  if (schemas)
    out.components = {
      ...doc.components,
      schemas: Object.fromEntries(Object.entries(schemas).map(([k, v]) => [k, fn(v)])),
    }
  return out
}

/**
 * A service's generated document made true to OpenAPI 3.1 (see `normalizeSchema`): integers
 * are `integer`, nullability is a `null` type, not `nullable`.
 *
 * @example
 * normalizeDocument(await (await app.handle(new Request('http://localhost/openapi.json'))).json())
 */
export function normalizeDocument<D extends OpenApiDocument>(doc: D): D {
  return mapDocumentSchemas(doc, (s) => normalizeSchema(s) as JsonSchema)
}
