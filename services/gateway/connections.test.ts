import { describe, expect, it } from 'bun:test'
import { createConnectionCap } from './connections.ts'

/** A server whose every request comes from `address` on the port the request names. */
const serverFor = (address: string) => ({
  requestIP: (r: Request) => ({ address, port: Number(new URL(r.url).searchParams.get('port')) }),
})
const on = (port: number) => new Request(`http://gw/api/v1/x?port=${port}`)

describe('keep-alive connections per address', () => {
  it('keeps the first connections of an address and closes those past the cap', () => {
    let t = 0
    const cap = createConnectionCap({ perAddress: 3, idleMs: 10_000, now: () => t })
    const server = serverFor('203.0.113.7')
    expect([1, 2, 3, 4, 5].map((p) => cap.admit(on(p), server))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ])
    // A kept connection carrying its next request stays kept.
    expect(cap.admit(on(2), server)).toBe(true)
    // Another address has caps of its own.
    expect(cap.admit(on(4), serverFor('198.51.100.9'))).toBe(true)
    expect(cap.countOf('203.0.113.7')).toBe(3)
    // Once the kept ones idled past the server's idle time, new connections are kept again.
    t = 10_001
    expect(cap.admit(on(6), server)).toBe(true)
    expect(cap.countOf('203.0.113.7')).toBe(1)
  })

  it('keeps a request whose connection is unknown (in-process, no server)', () => {
    const cap = createConnectionCap({ perAddress: 1, idleMs: 1000 })
    expect(cap.admit(on(1), undefined)).toBe(true)
    expect(cap.admit(on(2), undefined)).toBe(true)
  })
})
