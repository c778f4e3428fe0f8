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

  const refusal = (bytes: Uint8Array, boundary: string) =>
    readMultipart(chunked(bytes, 4096), boundary, {
      onField() {},
      onFile: () => ({ write() {} }),
    }).then(
      () => null,
      (e: Error) => e.message,
    )

  it('refuses a form of thousands of parts, oversized part headers and an oversized field', async () => {
    const many = new FormData()
    for (let i = 0; i < 5000; i++) many.append(`f${i}`, 'x')
    const m = await encode(many)
    expect(await refusal(m.bytes, m.boundary)).toContain('more than 32 parts')

    const b = 'XyZ'
    const longHeader = new TextEncoder().encode(
      `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${'a'.repeat(20_000)}"\r\n\r\nx\r\n--${b}--\r\n`,
    )
    expect(await refusal(longHeader, b)).toContain('oversized headers')

    const longField = new FormData()
    longField.append('password', 'p'.repeat(9000))
    const f = await encode(longField)
    expect(await refusal(f.bytes, f.boundary)).toContain("the form field 'password' is too long")
  })
})
