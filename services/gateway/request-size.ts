import http from 'node:http'
import { AppError } from '../kernel/errors.ts'

/** The longest URL the gateway serves; longer is a 414 problem (nginx's large buffer is 8 KiB). */
export const MAX_URL_LENGTH = 8192
/** The most header bytes (names, values, separators) the gateway serves; more is a 431 problem. */
export const MAX_HEADER_BYTES = 16 * 1024
/**
 * The runtime's own cap on a request's head (its line and headers). Past it Bun closes with a bare
 * 431 before any handler runs, so it sits well above the gateway's limits: everything between
 * them is refused here, as problem+json. Each connection buffers at most this while its head
 * arrives (64 MiB for 1,000 connections at once).
 */
export const RUNTIME_HEAD_LIMIT = 64 * 1024

/**
 * Raises the process's HTTP head limit (Bun's `--max-http-header-size`, 16 KiB by default) to
 * RUNTIME_HEAD_LIMIT. It is read when a server starts listening: call it before `Bun.serve`.
 */
export function raiseRuntimeHeadLimit(): void {
  if (http.maxHeaderSize < RUNTIME_HEAD_LIMIT)
    (http as { maxHeaderSize: number }).maxHeaderSize = RUNTIME_HEAD_LIMIT
}

/** Throws the 414 or 431 problem for a request whose URL or headers are over the limits. */
export function assertRequestSize(url: string, headers: Headers): void {
  if (url.length > MAX_URL_LENGTH)
    throw new AppError(
      'URI_TOO_LONG',
      `the URL is longer than ${MAX_URL_LENGTH} characters; send long filters in a body`,
      { extra: { limit: MAX_URL_LENGTH } },
    )
  let bytes = 0
  for (const [name, value] of headers) bytes += name.length + value.length + 4
  if (bytes > MAX_HEADER_BYTES)
    throw new AppError(
      'HEADERS_TOO_LARGE',
      `the request headers are larger than ${MAX_HEADER_BYTES} bytes; send fewer or shorter headers (cookies included)`,
      { extra: { limit: MAX_HEADER_BYTES } },
    )
}
