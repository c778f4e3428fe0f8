import { describe, expect, it } from 'bun:test'
import { createHop, HOP_HEADER } from './hop.ts'

describe('internal hop signature', () => {
  const hop = createHop('install-key-1')

  const signed = (extra: Record<string, string> = {}) => {
    const headers = new Headers({
      authorization: 'Bearer token-a',
      'x-forwarded-for': '203.0.113.9',
      'x-mmp-purpose': 'invoice-payment',
      ...extra,
    })
    hop.sign(headers)
    return headers
  }

  it('trusts the headers the platform signed', () => {
    const headers = signed()
    expect(hop.trusted(headers, 'x-forwarded-for')).toBe('203.0.113.9')
    expect(hop.trusted(headers, 'x-mmp-purpose')).toBe('invoice-payment')
  })

  it('trusts nothing a direct caller set without a signature', () => {
    const headers = new Headers({
      'x-forwarded-for': '10.0.0.1',
      'x-mmp-purpose': 'invoice-payment',
    })
    expect(hop.trusted(headers, 'x-forwarded-for')).toBeNull()
    expect(hop.trusted(headers, 'x-mmp-purpose')).toBeNull()
    headers.set(HOP_HEADER, `${Date.now()}.forged`)
    expect(hop.trusted(headers, 'x-mmp-purpose')).toBeNull()
  })

  it('refuses a signature moved to another claim, token or key', () => {
    const spoofed = signed()
    spoofed.set('x-forwarded-for', '198.51.100.7')
    expect(hop.trusted(spoofed, 'x-forwarded-for')).toBeNull()
    const otherToken = signed()
    otherToken.set('authorization', 'Bearer token-b')
    expect(hop.trusted(otherToken, 'x-mmp-purpose')).toBeNull()
    expect(createHop('another-install').trusted(signed(), 'x-mmp-purpose')).toBeNull()
  })

  it('refuses a stale signature', () => {
    let at = 1_000_000
    const clocked = createHop('install-key-1', () => at)
    const headers = new Headers({ 'x-mmp-purpose': 'invoice-payment' })
    clocked.sign(headers)
    at += 4 * 60_000
    expect(clocked.trusted(headers, 'x-mmp-purpose')).toBe('invoice-payment')
    at += 2 * 60_000
    expect(clocked.trusted(headers, 'x-mmp-purpose')).toBeNull()
  })
})
