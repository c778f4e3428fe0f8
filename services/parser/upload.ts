import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { ServiceContext } from '../kernel/context.ts'
import { AppError, invalidField } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { boundaryOf, readMultipart } from './multipart.ts'

export interface Spooled {
  path: string
  fileName: string | null
  fields: Record<string, string>
  /** Deletes the spooled file. */
  discard(): void
}

/**
 * Receives a statement upload without holding it in memory: the multipart body is read as it
 * arrives and the `file` part written to a temporary file in the data dir, which the import then
 * streams (twice when a plan limit needs a count first). Over `limit` bytes is a 413 even when
 * the client sent no Content-Length.
 */
export async function spoolUpload(
  ctx: ServiceContext,
  request: Request,
  limit: number,
): Promise<Spooled> {
  const boundary = boundaryOf(request.headers.get('content-type'))
  if (!boundary || !request.body) {
    throw invalidField('file', 'send the statement as multipart/form-data with a `file` part')
  }
  const dir = join(ctx.registry.dataDir, 'tmp')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${newId('imp')}.upload`)
  const discard = () => rmSync(path, { force: true })
  const writer = Bun.file(path).writer({ highWaterMark: 1024 * 1024 })
  const fields: Record<string, string> = {}
  let fileName: string | null = null
  let seen = false
  let bytes = 0
  try {
    await readMultipart(request.body, boundary, {
      onField: (name, value) => {
        fields[name] = value
      },
      onFile: (name, filename) => {
        if (name !== 'file' || seen) return null
        seen = true
        fileName = filename || null
        return {
          write: (chunk: Uint8Array) => {
            bytes += chunk.length
            if (bytes > limit) {
              throw new AppError('PAYLOAD_TOO_LARGE', `the statement is larger than ${limit} bytes`)
            }
            writer.write(chunk)
          },
        }
      },
    })
    await writer.end()
  } catch (err) {
    await Promise.resolve(writer.end()).catch(() => {})
    discard()
    throw err
  }
  if (!seen) {
    discard()
    throw invalidField('file', 'the form has no `file` part')
  }
  return { path, fileName, fields, discard }
}
