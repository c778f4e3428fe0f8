const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_SPAN = '0'.repeat(16)

const hex32 = () => (Math.random() * 0x100000000) >>> 0
/** A span id for the gateway's hop; not a secret, so Math.random is enough. */
export function newSpanId(): string {
  let id = hex32().toString(16).padStart(8, '0') + hex32().toString(16).padStart(8, '0')
  if (id === ZERO_SPAN) id = '0000000000000001'
  return id
}

/**
 * The W3C `traceparent` to send upstream: the client's trace id kept (with the gateway as the
 * new parent span), or a new trace when the header is absent or invalid. A new trace id reuses
 * the request id's UUIDv7 hex so logs and traces line up.
 */
export function traceparentFor(incoming: string | null, requestId: string): string {
  if (incoming) {
    const m = TRACEPARENT.exec(incoming.trim())
    if (m && m[1] !== 'ff' && m[2] !== ZERO_TRACE && m[3] !== ZERO_SPAN)
      return `00-${m[2]}-${newSpanId()}-${m[4]}`
  }
  const fromId = requestId.replaceAll('-', '').toLowerCase()
  const traceId = /^[0-9a-f]{32}$/.test(fromId) && fromId !== ZERO_TRACE ? fromId : randomTraceId()
  return `00-${traceId}-${newSpanId()}-01`
}

function randomTraceId(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex')
}

/** The trace id inside a traceparent value. */
export const traceIdOf = (traceparent: string) => traceparent.slice(3, 35)
