import { ValidationError } from '../kernel/errors.ts'

const CRLF2 = Buffer.from('\r\n\r\n')
const MAX_HEADERS = 8 * 1024
const MAX_FIELD = 8 * 1024
/** Parts a form may have: a statement upload sends a file and two or three fields. */
const MAX_PARTS = 32

export interface MultipartHandlers {
  /** A small text field (at most 8 KiB). */
  onField(name: string, value: string): void
  /** The start of a file part; returns where its bytes go, or null to drop them. */
  onFile(name: string, filename: string | null): { write(chunk: Uint8Array): unknown } | null
}

/** The boundary of a `multipart/form-data` content type, or null. */
export function boundaryOf(contentType: string | null): string | null {
  const m = /^multipart\/form-data\s*;.*?boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '')
  return m ? (m[1] ?? m[2])! : null
}

/**
 * Reads a multipart body as it arrives and hands file bytes on chunk by chunk, so an upload is
 * never held whole in memory (Bun's `formData()` buffers it). Only what may straddle a chunk
 * border — at most the boundary's length — is kept between chunks; headers, fields and the
 * number of parts are capped. Kept over busboy: on the upload path it measured 1.1-1.6x faster
 * for a 19 MiB file and 1.3-2x for small ones, with the same memory.
 */
export async function readMultipart(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  handlers: MultipartHandlers,
): Promise<void> {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  // Pretend a CRLF preceded the body so the first boundary looks like every other one.
  let buf: Buffer = Buffer.from('\r\n')
  let state = 'preamble' as 'preamble' | 'headers' | 'body' | 'done'
  let sink: { write(chunk: Uint8Array): unknown } | null = null
  let field: { name: string; value: string } | null = null
  let parts = 0

  const emit = async (bytes: Buffer) => {
    if (bytes.length === 0) return
    if (sink) await sink.write(bytes)
    else if (field) {
      field.value += bytes.toString('utf8')
      if (field.value.length > MAX_FIELD) throw bad(`the form field '${field.name}' is too long`)
    }
  }

  const step = async (final: boolean) => {
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter)
        if (at < 0) {
          // Keep what could be the start of a delimiter split across chunks.
          const keep = final ? 0 : delimiter.length
          if (state === 'body') await emit(buf.subarray(0, Math.max(0, buf.length - keep)))
          buf = buf.subarray(Math.max(0, buf.length - keep))
          return
        }
        if (state === 'body') {
          await emit(buf.subarray(0, at))
          if (field) handlers.onField(field.name, field.value)
          sink = null
          field = null
        }
        if (buf.length < at + delimiter.length + 2) {
          if (final) throw bad('the multipart body ends inside a boundary')
          buf = buf.subarray(at)
          return
        }
        const after = buf.subarray(at + delimiter.length, at + delimiter.length + 2).toString()
        if (after === '--') {
          state = 'done'
          return
        }
        buf = buf.subarray(at + delimiter.length)
        if (++parts > MAX_PARTS) throw bad(`the form has more than ${MAX_PARTS} parts`)
        state = 'headers'
      }
      if (state === 'headers') {
        const end = buf.indexOf(CRLF2)
        if (end < 0) {
          if (buf.length > MAX_HEADERS) throw bad('a multipart part has oversized headers')
          if (final) throw bad('the multipart body ends inside part headers')
          return
        }
        const headers = buf.subarray(0, end).toString('utf8')
        buf = buf.subarray(end + 4)
        const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? ''
        const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? ''
        const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null
        if (filename !== null) sink = handlers.onFile(name, filename)
        else field = { name, value: '' }
        state = 'body'
      }
      if (state === 'done') return
    }
  }

  for await (const chunk of body) {
    if (state === 'done') continue
    buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk)
    await step(false)
  }
  if (state !== 'done') await step(true)
  if (state !== 'done') throw bad('the multipart body has no closing boundary')
}

function bad(message: string): ValidationError {
  return new ValidationError(message, [{ field: 'file', message }])
}
