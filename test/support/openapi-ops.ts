/** One documented operation of the gateway's merged `/openapi.json`, as the security suite reads it. */
export interface Operation {
  method: string
  path: string
  summary: string
  public: boolean
  hasBody: boolean
  /** Takes only multipart/form-data (a file upload). */
  multipart: boolean
  tenantDoor: 'path' | 'query' | 'body' | null
}

/** Every operation of an OpenAPI document, with where it names a tenant. */
export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params: Array<{ in: string; name: string }> = op.parameters ?? []
      const named = (where: string) => params.some((p) => p.in === where && p.name === 'tenant_id')
      const schema = op.requestBody?.content?.['application/json']?.schema
      out.push({
        method,
        path,
        summary: op.summary ?? '',
        public: !op.security || op.security.length === 0,
        hasBody: !!op.requestBody,
        multipart:
          !!op.requestBody &&
          Object.keys(op.requestBody.content ?? {}).every((t) => t === 'multipart/form-data'),
        tenantDoor: named('path')
          ? 'path'
          : schema?.properties?.tenant_id
            ? 'body'
            : named('query')
              ? 'query'
              : null,
      })
    }
  }
  return out
}
