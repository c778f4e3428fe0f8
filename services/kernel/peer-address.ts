/** Socket peers of requests the kernel rebuilt (a body wrapped in its limit counter). */
const peers = new WeakMap<Request, string>()

export interface PeerServer {
  requestIP(request: Request): { address: string } | null
}

/**
 * Carries the socket peer of `original` over to `replaced`: Bun knows the address only of the
 * Request it made, so a rebuilt one (the body-limit wrapper) would otherwise have none, and a
 * login throttle keyed by it would fall into a bucket of its own.
 */
export function carryPeer(
  original: Request,
  replaced: Request,
  server: PeerServer | null | undefined,
) {
  const address = peers.get(original) ?? server?.requestIP(original)?.address
  if (address) peers.set(replaced, address)
}

/**
 * The socket peer's address of a request, rebuilt or not; null in-process (no socket).
 *
 * @example
 * peerAddress(request, server) // '203.0.113.7'
 */
export function peerAddress(
  request: Request,
  server: PeerServer | null | undefined,
): string | null {
  return peers.get(request) ?? server?.requestIP(request)?.address ?? null
}
