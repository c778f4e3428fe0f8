import { describe, expect, it } from 'bun:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { createTokenVerifier, TOKEN_ALGORITHM } from './tokens.ts'

const settings = { issuer: 'mmp', audience: 'mmp', clockToleranceSec: 5 }

async function setup() {
  const { privateKey, publicKey } = await generateKeyPair(TOKEN_ALGORITHM, { crv: 'Ed25519' })
  let nowMs = Date.parse('2026-03-01T10:00:00.250Z')
  const verifier = await createTokenVerifier(await exportSPKI(publicKey), settings, {
    now: () => nowMs,
    maxTokenAgeSec: 905,
  })
  const sign = (o: { sub: string; atMs?: number; sid?: string; withMs?: boolean }) => {
    const at = o.atMs ?? nowMs
    const iat = Math.floor(at / 1000)
    return new SignJWT({
      tenant_id: 'acme',
      role: 'Viewer',
      ...(o.withMs === false ? {} : { iat_ms: at }),
      ...(o.sid ? { sid: o.sid } : {}),
    })
      .setProtectedHeader({ alg: TOKEN_ALGORITHM })
      .setIssuer('mmp')
      .setAudience('mmp')
      .setSubject(o.sub)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 900)
      .sign(privateKey)
  }
  return {
    verifier,
    sign,
    now: () => nowMs,
    advance: (ms: number) => {
      nowMs += ms
    },
  }
}

describe('token revocation', () => {
  it('rejects a cached token of a revoked user and leaves other users alone', async () => {
    const s = await setup()
    const viewer = await s.sign({ sub: 'usr_v' })
    const other = await s.sign({ sub: 'usr_o' })
    expect((await s.verifier.verify(viewer)).userId).toBe('usr_v')
    await s.verifier.verify(other)
    s.advance(10)
    s.verifier.revoke({ userId: 'usr_v', before: s.now() / 1000 })
    // The first verify cached the token: the revocation is checked after the cache hit too.
    await expect(s.verifier.verify(viewer)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
    expect((await s.verifier.verify(other)).userId).toBe('usr_o')
  })

  it('rejects an uncached revoked token and accepts one issued later in the same second', async () => {
    const s = await setup()
    const before = await s.sign({ sub: 'usr_v' })
    s.advance(100)
    s.verifier.revoke({ userId: 'usr_v', before: s.now() / 1000 })
    s.advance(100)
    const after = await s.sign({ sub: 'usr_v' })
    await expect(s.verifier.verify(before)).rejects.toThrow('revoked')
    expect((await s.verifier.verify(after)).userId).toBe('usr_v')
    // Without iat_ms the token counts as issued at the start of its second: revoked.
    const coarse = await s.sign({ sub: 'usr_v', withMs: false })
    await expect(s.verifier.verify(coarse)).rejects.toThrow('revoked')
  })

  it('revokes one session only when a session id is given', async () => {
    const s = await setup()
    const a = await s.sign({ sub: 'usr_v', sid: 'ses_a' })
    const b = await s.sign({ sub: 'usr_v', sid: 'ses_b' })
    s.verifier.revoke({ userId: 'usr_v', sessionId: 'ses_a', before: s.now() / 1000 })
    await expect(s.verifier.verify(a)).rejects.toThrow('revoked')
    expect((await s.verifier.verify(b)).userId).toBe('usr_v')
  })

  it('keeps the stronger of two revocations and prunes ones older than any live token', async () => {
    const s = await setup()
    const t0 = await s.sign({ sub: 'usr_v' })
    s.verifier.revoke({ userId: 'usr_v', before: s.now() / 1000 })
    s.verifier.revoke({ userId: 'usr_v', before: s.now() / 1000 - 60 })
    await expect(s.verifier.verify(t0)).rejects.toThrow('revoked')
    // A revocation older than the longest lifetime is dropped: nothing it covers can verify.
    s.verifier.revoke({ userId: 'usr_x', before: s.now() / 1000 - 1000 })
    const x = await s.sign({ sub: 'usr_x', atMs: s.now() - 2000 })
    expect((await s.verifier.verify(x)).userId).toBe('usr_x')
    // After the sweep, tokens issued since the revocation keep working.
    s.advance(906_000)
    s.verifier.revoke({ userId: 'usr_y', before: s.now() / 1000 })
    const late = await s.sign({ sub: 'usr_v', atMs: s.now() - 1000 })
    expect((await s.verifier.verify(late)).userId).toBe('usr_v')
  })
})
