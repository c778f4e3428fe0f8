import { afterAll, describe, expect, it } from 'bun:test'
import { createServer } from 'node:net'
import { attemptDelivery } from './attempt.ts'
import { secretKey } from './signing.ts'

describe('one delivery attempt', () => {
  const seen: Array<{ host: string | null; path: string }> = []
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url)
      seen.push({ host: req.headers.get('host'), path: url.pathname })
      if (url.pathname === '/redirect')
        return new Response(null, { status: 307, headers: { location: '/internal' } })
      if (url.pathname === '/slow') return Bun.sleep(500).then(() => new Response('late'))
      return new Response('x'.repeat(5000))
    },
  })
  afterAll(() => receiver.stop(true))
  const port = receiver.port
  const input = (url: string, resolved: string[], allowInsecure = true) => ({
    url,
    messageId: 'msg_1',
    body: '{}',
    keys: [secretKey('secret')!],
    timeoutMs: 2000,
    policy: { allowInsecure, allowHosts: [] },
    resolve: async () => resolved,
    nowMs: Date.now(),
  })

  it('connects to the checked address and keeps the original Host header', async () => {
    const out = await attemptDelivery(input(`http://localhost:${port}/ok`, ['127.0.0.1']))
    expect(out).toMatchObject({ ok: true, statusCode: 200 })
    expect(out.responseExcerpt).toHaveLength(1024)
    expect(seen.at(-1)).toEqual({ host: `localhost:${port}`, path: '/ok' })
  })

  it('dates each attempt by the time it was started at', async () => {
    const t = Date.parse('2026-03-01T10:00:00.000Z')
    const url = `http://127.0.0.1:${port}/ok`
    const first = await attemptDelivery({ ...input(url, []), nowMs: t })
    const again = await attemptDelivery({ ...input(url, []), nowMs: t })
    const later = await attemptDelivery({ ...input(url, []), nowMs: t + 1500 })
    expect([first.at, again.at, later.at]).toEqual([
      '2026-03-01T10:00:00.000Z',
      '2026-03-01T10:00:00.000Z',
      '2026-03-01T10:00:01.500Z',
    ])
  })

  it('refuses at attempt time a name that now resolves to an internal address', async () => {
    const before = seen.length
    const out = await attemptDelivery(
      input(`https://hooks.example:${port}/ok`, ['127.0.0.1'], false),
    )
    expect(out.ok).toBe(false)
    expect(out.statusCode).toBeNull()
    expect(out.error).toContain('destination refused')
    expect(seen.length).toBe(before)
  })

  it('refuses at attempt time IPv6 forms of internal IPv4 addresses, literal or resolved', async () => {
    const before = seen.length
    for (const [url, resolved] of [
      [`https://[::127.0.0.1]:${port}/ok`, []],
      [`https://[64:ff9b::7f00:1]:${port}/ok`, []],
      [`https://[2002:7f00:1::]:${port}/ok`, []],
      [`https://rebound.example:${port}/ok`, ['::7f00:1']],
      [`https://rebound.example:${port}/ok`, ['64:ff9b::7f00:1', '2002:7f00:1::']],
    ] as const) {
      const out = await attemptDelivery(input(url, [...resolved], false))
      expect(out).toMatchObject({ ok: false, statusCode: null })
      expect(out.error).toContain('destination refused')
    }
    expect(seen.length).toBe(before)
  })

  it('does not follow redirects and reports them as failures', async () => {
    const out = await attemptDelivery(input(`http://127.0.0.1:${port}/redirect`, []))
    expect(out).toMatchObject({ ok: false, statusCode: 307 })
    expect(out.error).toContain('redirect')
    expect(seen.some((s) => s.path === '/internal')).toBe(false)
  })

  it('gives up after the attempt timeout', async () => {
    const out = await attemptDelivery({
      ...input(`http://127.0.0.1:${port}/slow`, []),
      timeoutMs: 100,
    })
    expect(out).toMatchObject({ ok: false, statusCode: null })
    expect(out.error).toContain('100 ms')
  })

  it('tries the next checked address when one refuses the connection', async () => {
    const out = await attemptDelivery(
      input(`http://hooks.localhost:${port}/ok`, ['127.0.0.2', '::1', '127.0.0.1']),
    )
    expect(out).toMatchObject({ ok: true, statusCode: 200 })
    expect(seen.at(-1)).toEqual({ host: `hooks.localhost:${port}`, path: '/ok' })
  })

  it('reads no more than 64 KiB of an answer, whatever length it declares', async () => {
    const total = 64 * 1024 * 1024
    const chunk = Buffer.alloc(1024 * 1024, 'x')
    /** Answers with `head` and then up to 64 MiB; resolves with the bytes it could write. */
    const hostile = (head: string, frame: (b: Buffer) => Buffer) => {
      let written = 0
      const done = Promise.withResolvers<number>()
      const server = createServer((socket) => {
        socket.on('error', () => {})
        socket.on('close', () => done.resolve(written))
        socket.once('data', async () => {
          socket.write(head)
          while (written < total && !socket.destroyed) {
            if (!socket.write(frame(chunk))) await new Promise((r) => socket.once('drain', r))
            written += chunk.length
          }
          socket.end()
        })
      })
      return { server, written: done.promise }
    }
    const hex = (b: Buffer) =>
      Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')])
    for (const [head, frame] of [
      ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n', (b: Buffer) => b],
      ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n', hex],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', hex],
    ] as const) {
      const { server, written } = hostile(head, frame)
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      const { port: hostilePort } = server.address() as { port: number }
      const out = await attemptDelivery(input(`http://127.0.0.1:${hostilePort}/`, []))
      expect(out).toMatchObject({ ok: true, statusCode: 200 })
      expect(out.responseExcerpt!.length).toBeLessThanOrEqual(1024)
      // The attempt hung up long before the receiver could push everything.
      expect(await written).toBeLessThan(total)
      server.close()
    }
  })
})
