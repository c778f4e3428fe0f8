import http from 'node:http'
import https from 'node:https'

/**
 * A small HTTP/1.1 client on node:http for provider calls. Bun's `fetch` shares one pool of 256
 * concurrent requests per process (BUN_CONFIG_MAX_HTTP_REQUESTS); when the gateway, this service
 * and the simulator share a process, the gateway's proxied requests can fill that pool while each of
 * them waits on a provider call queued behind them — a deadlock past 256 concurrent payments.
 * node:http keeps its own sockets, so provider calls never wait on the gateway's.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 128 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 128 }),
}

export interface HttpAnswer {
  status: number
  text: string
}

/** No answer. `sent`: the connection was open, so the request may have reached the server. */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message)
    this.name = 'NetworkError'
  }
}

export function httpRequest(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string; timeoutMs: number },
): Promise<HttpAnswer> {
  const u = new URL(url)
  const lib = u.protocol === 'https:' ? https : http
  const agent = agents[u.protocol as 'http:' | 'https:']
  if (!agent) return Promise.reject(new NetworkError(`unsupported protocol ${u.protocol}`, false))
  return new Promise((resolve, reject) => {
    // Until the socket connects nothing can have reached the server (refused, unresolvable).
    let connected = false
    const headers: Record<string, string | number> = { ...(init.headers ?? {}) }
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body)
    const req = lib.request(
      u,
      { method: init.method, headers, agent, timeout: init.timeoutMs },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        )
        res.on('error', (err) => reject(new NetworkError(err.message, true)))
      },
    )
    req.on('socket', (socket) => {
      if (!socket.connecting) connected = true
      else socket.once('connect', () => (connected = true))
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${init.timeoutMs} ms`)))
    req.on('error', (err) => reject(new NetworkError(err.message, connected)))
    if (init.body !== undefined) req.write(init.body)
    req.end()
  })
}
