import { connect } from 'node:net'

/** A socket that sent one request and keeps its connection: its answer's status, and whether it closed. */
export interface KeptAlive {
  /** The status code of the answer (three digits), or '' when none came. */
  status: Promise<string>
  closed(): boolean
  end(): void
}

/**
 * Opens `n` keep-alive connections to a server at once, each sending one GET for `path`, without
 * closing them: what an idle-connection flood does.
 *
 * @example
 * const sockets = await openKeptAlive(p.gateway, '/api/v1/analytics/summary', 300)
 */
export function openKeptAlive(base: string, path: string, n: number): Promise<KeptAlive[]> {
  const url = new URL(base)
  const one = () =>
    new Promise<KeptAlive>((resolve, reject) => {
      let closed = false
      let head = ''
      const { promise, resolve: answered } = Promise.withResolvers<string>()
      const s = connect(Number(url.port), url.hostname, () => {
        s.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`)
        resolve({ closed: () => closed, status: promise, end: () => s.destroy() })
      })
      s.on('data', (d) => {
        head += d.toString('latin1')
        answered(head.slice(9, 12))
      })
      s.on('close', () => {
        closed = true
        answered(head.slice(9, 12))
      })
      s.on('error', reject)
    })
  return Promise.all(Array.from({ length: n }, one))
}
