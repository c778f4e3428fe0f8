const TYPES = { csv: 'text/csv; charset=utf-8', pdf: 'application/pdf' } as const

/**
 * A file for the caller to save (an export, a report, an invoice): its content type, offered as
 * an attachment named `<name>.<type>`, with the request id.
 *
 * @example
 * return downloadResponse({ body: pdf, name: inv.number, type: 'pdf', requestId })
 */
export function downloadResponse({
  body,
  name,
  type,
  requestId,
}: {
  body: BodyInit
  name: string
  type: keyof typeof TYPES
  requestId: string
}): Response {
  return new Response(body, {
    headers: {
      'content-type': TYPES[type],
      'content-disposition': `attachment; filename="${name}.${type}"`,
      'x-request-id': requestId,
    },
  })
}

/** The OpenAPI `responses` of a route that answers a CSV or a PDF file. */
export const CSV_OR_PDF_RESPONSES = {
  200: {
    description: 'text/csv or application/pdf',
    content: {
      'text/csv': { schema: { type: 'string' } },
      'application/pdf': { schema: { type: 'string', format: 'binary' } },
    },
  },
} as const
