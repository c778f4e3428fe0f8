/**
 * A TCP forwarder, run as its own process (`bun test/support/tcp-forward.ts HOST PORT`): it listens
 * on a loopback port of its network namespace, prints that port, and pipes every connection to
 * HOST:PORT. The multi-host test runs it beside the webhook part, whose plain-http webhooks may
 * only go to a loopback address, to reach the test's receiver on the host.
 */
import type { Socket } from 'bun'

interface Pipe {
  /** The other end, once connected. */
  peer: Socket<Pipe> | null
  /** What this end could not take yet. */
  pending: Uint8Array[]
  /** What arrived for the other end before it was connected. */
  early: Uint8Array[]
}

const flush = (to: Socket<Pipe>, pending: Uint8Array[]) => {
  while (pending.length > 0) {
    const chunk = pending[0]!
    const n = to.write(chunk)
    if (n < chunk.length) {
      pending[0] = chunk.subarray(n)
      return
    }
    pending.shift()
  }
}

/** Writes what the peer can take now and keeps the rest for its drain. */
const send = (to: Socket<Pipe>, data: Uint8Array) => {
  to.data.pending.push(new Uint8Array(data))
  flush(to, to.data.pending)
}

const [host, port] = [process.argv[2]!, Number(process.argv[3])]
const server = Bun.listen<Pipe>({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    open(client) {
      client.data = { peer: null, pending: [], early: [] }
      void Bun.connect<Pipe>({
        hostname: host,
        port,
        data: { peer: client, pending: [], early: [] },
        socket: {
          open(upstream) {
            client.data.peer = upstream
            for (const chunk of client.data.early.splice(0)) send(upstream, chunk)
          },
          data: (upstream, chunk) => send(upstream.data.peer!, chunk),
          drain: (upstream) => flush(upstream, upstream.data.pending),
          close: (upstream) => void upstream.data.peer?.end(),
          error: (upstream) => void upstream.data.peer?.end(),
        },
      }).catch(() => client.end())
    },
    data(client, chunk) {
      if (client.data.peer) send(client.data.peer, chunk)
      else client.data.early.push(new Uint8Array(chunk))
    },
    drain: (client) => flush(client, client.data.pending),
    close: (client) => void client.data.peer?.end(),
    error: (client) => void client.data.peer?.end(),
  },
})
console.log(server.port)
