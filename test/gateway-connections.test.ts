import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

/** Sends one keep-alive request on a socket and resolves with the answer's head, lower-cased. */
function ask(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.off('data', onData)
      resolve(head.slice(0, end).toLowerCase())
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.write('GET /health HTTP/1.1\r\nHost: mmp.test\r\nConnection: keep-alive\r\n\r\n')
  })
}

/**
 * gateway.connections_per_address set on the command line reaches the running gateway: with 2,
 * one address's third keep-alive connection is answered and told to close, the first two stay.
 */
describe('gateway.connections_per_address', () => {
  let platform: TestPlatform
  const sockets: Socket[] = []
  beforeAll(async () => {
    platform = await startTestPlatform({
      only: 'gateway',
      env: { MMP_GATEWAY_CONNECTIONS_PER_ADDRESS: '2' },
    })
  }, 60_000)
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await platform?.dispose()
  })

  it('closes the connections of one address past the setting', async () => {
    const { port } = new URL(platform.url('gateway'))
    const open = () =>
      new Promise<Socket>((resolve, reject) => {
        // From an address of its own: the harness's health checks hold 127.0.0.1's connections.
        const s = connect(
          { port: Number(port), host: '127.0.0.1', localAddress: '127.0.0.2' },
          () => resolve(s),
        )
        s.once('error', reject)
        sockets.push(s)
      })
    const heads: string[] = []
    for (let i = 0; i < 3; i++) heads.push(await ask(await open()))
    const closing = heads.map((h) => /^connection: close$/m.test(h))
    expect(closing).toEqual([false, false, true])
    // A kept connection carries its next request and is still kept.
    expect(await ask(sockets[0]!)).not.toMatch(/^connection: close$/m)
  })
})
