/**
 * The parts of a zip (an XLSX is one) read from its central directory, and one part's bytes
 * inflated as a stream: a slice of the file at a time goes through the platform's
 * `DecompressionStream` (native zlib) and is handed on as text, so neither the file nor what a
 * part unpacks to is ever held whole.
 * Every part is checked against the size its directory declares while it inflates: a part that
 * unpacks past it (an inflate bomb with a lying directory) stops the read at once.
 */
export interface ZipPart {
  name: string
  /** 0 stored, 8 deflated. */
  method: number
  flags: number
  packed: number
  /** What the directory declares it unpacks to. */
  size: number
  /** Where its local header starts. */
  at: number
}

/** A zip that cannot be read as one: its directory or a part is damaged or unsupported. */
export class ZipError extends Error {}

/** Compressed bytes fed to the inflater at a time: bounds what one step can unpack. */
const SLICE = 1024 * 1024

/** Bytes `from`–`to` of a file (a slice of a Blob is not copied until it is read). */
const bytesOf = async (file: Blob, from: number, to: number) =>
  new Uint8Array(await file.slice(from, to).arrayBuffer())

/**
 * The parts listed in the zip's central directory, or null when it has none to be found. Only
 * the directory is read, not the file.
 */
export async function zipParts(file: Blob): Promise<ZipPart[] | null> {
  // The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
  const tailFrom = Math.max(0, file.size - 65_557)
  const tail = await bytesOf(file, tailFrom, file.size)
  const end = new DataView(tail.buffer)
  let eocd = -1
  for (let i = tail.length - 22; i >= 0; i--) {
    if (end.getUint32(i, true) === 0x06054b50) {
      eocd = i
      break
    }
  }
  if (eocd < 0) return null
  const count = end.getUint16(eocd + 10, true)
  const dirFrom = end.getUint32(eocd + 16, true)
  const dirSize = end.getUint32(eocd + 12, true)
  if (dirFrom + dirSize > file.size) return null
  const dir = await bytesOf(file, dirFrom, dirFrom + dirSize)
  const view = new DataView(dir.buffer)
  const names = new TextDecoder()
  const parts: ZipPart[] = []
  let at = 0
  for (let n = 0; n < count; n++) {
    if (at + 46 > dir.length || view.getUint32(at, true) !== 0x02014b50) return null
    const nameLength = view.getUint16(at + 28, true)
    const size = view.getUint32(at + 24, true)
    parts.push({
      name: names.decode(dir.subarray(at + 46, at + 46 + nameLength)).replaceAll('\\', '/'),
      method: view.getUint16(at + 10, true),
      flags: view.getUint16(at + 8, true),
      packed: view.getUint32(at + 20, true),
      // 0xFFFFFFFF: a ZIP64 size, past any sane statement.
      size: size === 0xffffffff ? Number.POSITIVE_INFINITY : size,
      at: view.getUint32(at + 42, true),
    })
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
  }
  return parts
}

/**
 * A part's content as UTF-8 text, handed to `onText` a piece at a time in order. `onText`
 * returning false stops the read early (what it wanted is found). After each piece the
 * read waits for `between`, so its consumer can hand on what it has made.
 */
export async function readPartText(
  file: Blob,
  part: ZipPart,
  onText: (text: string) => boolean | undefined,
  between?: () => Promise<void> | undefined | void,
): Promise<void> {
  const [from, to] = await partData(file, part)
  const decoder = new TextDecoder('utf-8', { fatal: false })
  let unpacked = 0
  const take = (chunk: Uint8Array): boolean => {
    unpacked += chunk.length
    if (unpacked > part.size)
      throw new ZipError(`${part.name} unpacks past the size its zip directory declares`)
    return onText(decoder.decode(chunk as Uint8Array<ArrayBuffer>, { stream: true })) !== false
  }
  if (part.method === 0 || from === to) {
    for (let i = from; i < to; i += SLICE) {
      if (!take(await bytesOf(file, i, Math.min(i + SLICE, to)))) return
      await between?.()
    }
  } else {
    const inflate = new DecompressionStream('deflate-raw')
    const writer = inflate.writable.getWriter()
    const reader = inflate.readable.getReader()
    // The compressed bytes go in a slice at a time as the reader takes what they unpack to.
    const feeding = (async () => {
      for (let i = from; i < to; i += SLICE) {
        const slice = await bytesOf(file, i, Math.min(i + SLICE, to))
        await writer.ready
        await writer.write(slice)
      }
      await writer.close()
    })()
    feeding.catch(() => {})
    try {
      for (;;) {
        const { value, done } = await inflatedSlice(reader)
        if (done) break
        if (!take(value)) return
        await between?.()
      }
      await feeding
    } finally {
      reader.cancel().catch(() => {})
    }
  }
  onText(decoder.decode())
}

async function inflatedSlice(reader: ReadableStreamDefaultReader<Uint8Array>) {
  try {
    return await reader.read()
  } catch (err) {
    throw new ZipError(`a part is not valid deflate data (${(err as Error).message})`)
  }
}

/** Where a part's stored bytes are, after its local header (whose name and extra lengths may differ). */
async function partData(file: Blob, part: ZipPart): Promise<[number, number]> {
  if (part.flags & 1) throw new ZipError(`${part.name} is encrypted`)
  if (part.method !== 0 && part.method !== 8)
    throw new ZipError(`${part.name} is packed with method ${part.method}, not deflate`)
  const head = await bytesOf(file, part.at, part.at + 30)
  const view = new DataView(head.buffer)
  if (head.length < 30 || view.getUint32(0, true) !== 0x04034b50)
    throw new ZipError(`${part.name} has no local header where its directory says`)
  const start = part.at + 30 + view.getUint16(26, true) + view.getUint16(28, true)
  if (start + part.packed > file.size) throw new ZipError(`${part.name} is cut short`)
  return [start, start + part.packed]
}
