/** What the gateway needs of the server: a request's peer address and port (its connection). */
export type PeerServer = {
  requestIP(request: Request): { address: string; port?: number } | null
}

/** Keep-alive connections one address may hold open at the gateway (per process). */
export const DEFAULT_CONNECTIONS_PER_ADDRESS = 128

/**
 * Caps the keep-alive connections one client address holds open (per process): a connection is
 * known by its peer address and port, and counted until it has been idle as long as the server
 * keeps idle connections. A request on a connection past the cap is answered, with `Connection:
 * close`, so the socket ends with its answer instead of idling: 2,000 idle sockets from one address
 * would otherwise hold 2,000 descriptors for the whole idle timeout. Bun shows no connection
 * events, so a connection the client closed is counted until its idle time would have run out:
 * the cost is a closed keep-alive, never a refused request.
 *
 * @example
 * const cap = createConnectionCap({ perAddress: 128, idleMs: 130_000 })
 * if (!cap.admit(request, server)) response.headers.set('connection', 'close')
 */
export function createConnectionCap(opts: {
  perAddress?: number
  idleMs: number
  now?: () => number
}) {
  const perAddress = opts.perAddress ?? DEFAULT_CONNECTIONS_PER_ADDRESS
  const now = opts.now ?? Date.now
  /** Address → port → when the connection last carried a request. */
  const open = new Map<string, Map<number, number>>()
  let sweptAt = 0

  const sweep = (t: number) => {
    for (const [address, ports] of open) {
      for (const [port, seen] of ports) if (t - seen > opts.idleMs) ports.delete(port)
      if (ports.size === 0) open.delete(address)
    }
    sweptAt = t
  }

  return {
    /** Whether the request's connection may stay open after its answer. */
    admit(request: Request, server: PeerServer | undefined): boolean {
      const peer = server?.requestIP(request)
      if (!peer || peer.port === undefined) return true
      const t = now()
      if (t - sweptAt > opts.idleMs) sweep(t)
      let ports = open.get(peer.address)
      if (ports?.has(peer.port)) {
        ports.set(peer.port, t)
        return true
      }
      if (ports && ports.size >= perAddress) {
        for (const [port, seen] of ports) if (t - seen > opts.idleMs) ports.delete(port)
        if (ports.size >= perAddress) return false
      }
      if (!ports) {
        ports = new Map()
        open.set(peer.address, ports)
      }
      ports.set(peer.port, t)
      return true
    },
    /** Connections counted for an address (for tests and metrics). */
    countOf: (address: string) => open.get(address)?.size ?? 0,
  }
}
