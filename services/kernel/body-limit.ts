import { AppError } from './errors.ts'

/** 413 as a kernel error: the limit it broke is in the detail. */
export function payloadTooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `the body is larger than ${limit} bytes`, {
    extra: { limit },
  })
}

/**
 * Reads a request body into memory, counting as it arrives: past `limit` bytes it stops reading,
 * cancels the stream and throws a 413, whatever the Content-Length said or whether there was
 * one (DESIGN §15: a chunked body has none). Memory stays at most `limit` per request.
 *
 * @example
 * const bytes = await readLimited(request.body, 1024 * 1024)
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0)
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw payloadTooLarge(limit)
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/**
 * Passes a body through while counting it: past `limit` bytes the stream errors with a 413 and
 * `exceeded()` turns true, so a streaming consumer (a statement upload spooled to disk, a proxy
 * hop) is cut off without the body ever being held whole.
 */
export function limitStream(
  body: ReadableStream<Uint8Array>,
  limit: number,
): { stream: ReadableStream<Uint8Array>; exceeded(): boolean } {
  let size = 0
  let over = false
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength
        if (size > limit) {
          over = true
          controller.error(payloadTooLarge(limit))
          return
        }
        controller.enqueue(chunk)
      },
    }),
  )
  return { stream, exceeded: () => over }
}
