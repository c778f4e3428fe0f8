import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/** A streamed body read once: its hash, and the request to run with it read back from disk. */
export interface SpooledBody {
  /** SHA-256 (hex) of the body's bytes, multipart boundary left out. */
  hash: string
  /** The same request, its body now streamed from the spool file. */
  request: Request
  /** Removes the spool file (idempotent). */
  discard(): void
}

/**
 * Hashes a body the route reads as a stream (a statement upload) while it arrives, and spools it to
 * `<dataDir>/tmp` for the route to read: memory stays at one chunk per request, whatever the size
 * (a copy of the whole body to hash it cost 8 × 19 MiB uploads half a GiB). A multipart boundary is
 * random per send, so it is left out of the hash: the same file sent again with the same key is the
 * same request. A body over the service's limit fails here with its 413, the spool removed.
 *
 * @example
 * const spooled = await spoolBody(ctx.registry.dataDir, request)
 * // ... spooled.hash decides; the route runs with spooled.request; then spooled.discard()
 */
export async function spoolBody(dataDir: string, request: Request): Promise<SpooledBody> {
  const dir = join(dataDir, 'tmp')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const path = join(dir, `idem-${crypto.randomUUID()}.body`)
  const discard = () => rmSync(path, { force: true })
  const boundary = /boundary=("?)([^";]+)\1/i.exec(request.headers.get('content-type') ?? '')?.[2]
  const hash = boundaryFreeHasher(boundary)
  const writer = Bun.file(path).writer({ highWaterMark: 1024 * 1024 })
  try {
    const reader = request.body!.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      hash.update(value)
      writer.write(value)
    }
    await writer.end()
  } catch (err) {
    await Promise.resolve(writer.end()).catch(() => {})
    discard()
    throw err
  }
  const replaced = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: Bun.file(path).stream(),
    signal: request.signal,
    duplex: 'half',
  } as RequestInit)
  return { hash: hash.digest(), request: replaced, discard }
}

/**
 * SHA-256 over a byte stream with every occurrence of `boundary` removed, whichever chunks it
 * straddles: the last `boundary.length - 1` characters wait for the next chunk before they count.
 */
export function boundaryFreeHasher(boundary: string | undefined) {
  const hasher = new Bun.CryptoHasher('sha256')
  const keep = boundary ? boundary.length - 1 : 0
  let carry = ''
  return {
    update(chunk: Uint8Array) {
      if (!boundary) {
        hasher.update(chunk)
        return
      }
      const text = (carry + Buffer.from(chunk).toString('latin1')).replaceAll(boundary, '')
      const cut = Math.max(0, text.length - keep)
      hasher.update(Buffer.from(text.slice(0, cut), 'latin1'))
      carry = text.slice(cut)
    },
    digest(): string {
      if (carry) hasher.update(Buffer.from(carry, 'latin1'))
      carry = ''
      return hasher.digest('hex')
    },
  }
}
