import { describe, expect, it } from 'bun:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { type ApiKeyGrant, AppError, createTokenVerifier, TOKEN_ALGORITHM } from './tokens.ts'

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

describe('API keys in the verifier', () => {
  const KEY = `mmp_sk_${'a'.repeat(43)}`
  const OTHER = `mmp_sk_${'b'.repeat(43)}`
  const keySetup = async (grants: Record<string, ApiKeyGrant | null>) => {
    const s = await setup()
    const asked: string[] = []
    s.verifier.resolveApiKeysWith(async (key) => {
      asked.push(key)
      return grants[key] ?? null
    })
    return { ...s, asked }
  }
  const grant = (o: Partial<ApiKeyGrant> = {}): ApiKeyGrant => ({
    id: 'key_1',
    tenantId: 'acme',
    role: 'Analyst',
    expiresAt: null,
    ...o,
  })

  it('accepts a live key as an actor of its tenant and role, named by the key id', async () => {
    const s = await keySetup({ [KEY]: grant() })
    expect(await s.verifier.verify(KEY)).toMatchObject({
      userId: 'key_1',
      tenantId: 'acme',
      role: 'Analyst',
      token: KEY,
    })
  })

  it('refuses an unknown key, a malformed one and any key without a resolver', async () => {
    const s = await keySetup({})
    await expect(s.verifier.verify(KEY)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
    await expect(s.verifier.verify('mmp_sk_short')).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    })
    expect(s.asked).toEqual([KEY])
    const bare = await setup()
    await expect(bare.verifier.verify(KEY)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'API keys are not accepted here',
    })
  })

  it('refuses a key whose expiry passed, even while its answer is cached', async () => {
    const soon = await keySetup({})
    soon.verifier.resolveApiKeysWith(async (key) => {
      soon.asked.push(key)
      return grant({ expiresAt: soon.now() + 1_000 })
    })
    expect((await soon.verifier.verify(KEY)).userId).toBe('key_1')
    soon.advance(1_000)
    await expect(soon.verifier.verify(KEY)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: 'the API key has expired',
    })
    expect(soon.asked).toHaveLength(1)
  })

  it('asks once per 30 s and refuses a cached key at once when its revocation arrives', async () => {
    const s = await keySetup({ [KEY]: grant(), [OTHER]: grant({ id: 'key_2' }) })
    await s.verifier.verify(KEY)
    await s.verifier.verify(OTHER)
    s.advance(29_000)
    await s.verifier.verify(KEY)
    expect(s.asked).toEqual([KEY, OTHER])
    s.advance(1_000)
    await s.verifier.verify(KEY)
    expect(s.asked).toEqual([KEY, OTHER, KEY])

    s.verifier.revoke({ userId: 'key_1', apiKeyId: 'key_1', before: s.now() / 1000 })
    await expect(s.verifier.verify(KEY)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' })
    // Other keys, and the users' tokens, are untouched.
    expect((await s.verifier.verify(OTHER)).userId).toBe('key_2')
    expect((await s.verifier.verify(await s.sign({ sub: 'key_1' }))).userId).toBe('key_1')
  })

  it('refuses an answer that was on its way when the revocation came', async () => {
    const s = await setup()
    let answer: (g: ApiKeyGrant) => void = () => {}
    let asked = 0
    s.verifier.resolveApiKeysWith(() => {
      asked++
      return new Promise((r) => {
        answer = r
      })
    })
    const first = s.verifier.verify(KEY)
    const second = s.verifier.verify(KEY)
    s.verifier.revoke({ userId: 'key_1', apiKeyId: 'key_1', before: s.now() / 1000 })
    answer(grant())
    const [a, b] = await Promise.allSettled([first, second])
    expect(a).toMatchObject({ status: 'rejected', reason: { code: 'UNAUTHENTICATED' } })
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'UNAUTHENTICATED' } })
    // Concurrent requests with one key asked auth once.
    expect(asked).toBe(1)
  })

  it('passes a refusal other than "unknown" through without caching it', async () => {
    const s = await setup()
    let calls = 0
    s.verifier.resolveApiKeysWith(async () => {
      calls++
      throw new AppError('FEATURE_DISABLED', 'no api_access')
    })
    await expect(s.verifier.verify(KEY)).rejects.toMatchObject({ code: 'FEATURE_DISABLED' })
    await expect(s.verifier.verify(KEY)).rejects.toMatchObject({ code: 'FEATURE_DISABLED' })
    expect(calls).toBe(2)
  })
})
