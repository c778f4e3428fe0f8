import { describe, expect, it } from 'bun:test'
import { boundaryOf, readMultipart } from './multipart.ts'

async function encode(form: FormData): Promise<{ bytes: Uint8Array; boundary: string }> {
  const req = new Request('http://localhost/', { method: 'POST', body: form })
  // Bun fills in the content type (and its boundary) before the body is read.
  const boundary = boundaryOf(req.headers.get('content-type'))!
  return { bytes: new Uint8Array(await req.arrayBuffer()), boundary }
}

function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close()
      c.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

describe('streaming multipart reader', () => {
  const content = `Receipt No.,Details\r\n${'QAB1,"x ""y"" ------"\r\n'.repeat(300)}`

  for (const size of [1, 7, 64, 1000, 1 << 20]) {
    it(`reads fields and the file whatever the chunk size (${size} bytes)`, async () => {
      const form = new FormData()
      form.append('tenant_id', 'acme')
      form.append('file', new File([content], 'jan.csv', { type: 'text/csv' }))
      form.append('note', 'after the file')
      const { bytes, boundary } = await encode(form)
      const fields: Record<string, string> = {}
      const parts: Uint8Array[] = []
      let filename: string | null = null
      await readMultipart(chunked(bytes, size), boundary, {
        onField: (name, value) => {
          fields[name] = value
        },
        onFile: (_name, f) => {
          filename = f
          return { write: (c) => parts.push(new Uint8Array(c)) }
        },
      })
      expect(fields).toEqual({ tenant_id: 'acme', note: 'after the file' })
      expect(filename).toBe('jan.csv' as never)
      expect(Buffer.concat(parts).toString()).toBe(content)
    })
  }

  it('refuses a body cut short', async () => {
    const form = new FormData()
    form.append('file', new File([content], 'jan.csv'))
    const { bytes, boundary } = await encode(form)
    const cut = bytes.slice(0, bytes.length - 50)
    expect(
      readMultipart(chunked(cut, 100), boundary, { onField() {}, onFile: () => ({ write() {} }) }),
    ).rejects.toThrow()
  })

  it('reads the boundary from the content type, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc')).toBe('abc')
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b"')).toBe('a b')
    expect(boundaryOf('application/json')).toBe(null)
  })
})
