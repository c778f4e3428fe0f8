import { afterEach, beforeEach, describe, expect, it, spyOn } from 'bun:test'
import type { ServiceInstance } from '../kernel/context.ts'
import type { TestKit } from '../kernel/testing.ts'
import { authKit, OPERATOR } from './test-kit.ts'

describe('login throttle under concurrency', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  let verify: ReturnType<typeof spyOn<typeof Bun.password, 'verify'>>

  /** A login as the gateway forwards it: the client's address in a hop-signed X-Forwarded-For. */
  const login = async (
    password: string,
    ip = '203.0.113.7',
    email = OPERATOR.email,
    signed = true,
  ) => {
    const headers = new Headers({ 'content-type': 'application/json', 'x-forwarded-for': ip })
    if (signed) kit.ctx.hop!.sign(headers)
    const res = await app.handle(
      new Request('http://auth/api/v1/auth/login', {
        method: 'POST',
        headers,
        body: JSON.stringify({ email, password }),
      }),
    )
    return { status: res.status, retryAfter: res.headers.get('retry-after') }
  }
  const tally = (statuses: number[]) =>
    statuses.reduce<Record<number, number>>((acc, s) => {
      acc[s] = (acc[s] ?? 0) + 1
      return acc
    }, {})
  const storedCount = (key: string) =>
    kit.registry
      .platform('auth')
      .sqlite.query<{ count: number }, [string]>('SELECT count FROM login_failures WHERE key = ?')
      .get(key)?.count ?? 0

  beforeEach(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
    verify = spyOn(Bun.password, 'verify')
  })
  afterEach(() => {
    verify.mockRestore()
    kit.cleanup()
  })

  for (const n of [40, 300]) {
    it(`evaluates at most 5 of ${n} concurrent guesses from one address, and then refuses the right password`, async () => {
      const guesses = Array.from({ length: n }, (_, i) =>
        // The right password is the 31st: it arrives after the budget is spent, so it is refused.
        login(i === 30 ? OPERATOR.password : `wrong-guess-${i}`),
      )
      const statuses = (await Promise.all(guesses)).map((r) => r.status)
      expect(verify.mock.calls.length).toBe(5)
      expect(tally(statuses)).toEqual({ 401: 5, 429: n - 5 })
      expect(statuses[30]).toBe(429)
      expect(storedCount(`${OPERATOR.email}|203.0.113.7`)).toBe(5)
      const after = await login(OPERATOR.password)
      expect(after.status).toBe(429)
      expect(Number(after.retryAfter)).toBeGreaterThan(0)
      expect(verify.mock.calls.length).toBe(5)
    }, 30_000)
  }

  it('evaluates at most 20 of 300 concurrent guesses spread over 300 addresses', async () => {
    const statuses = (
      await Promise.all(
        Array.from({ length: 300 }, (_, i) => login(`wrong-${i}`, `198.51.100.${i}`)),
      )
    ).map((r) => r.status)
    expect(verify.mock.calls.length).toBe(20)
    expect(tally(statuses)).toEqual({ 401: 20, 429: 280 })
    // The ceiling holds for the account from a fresh address too, until the window ends.
    expect((await login(OPERATOR.password, '192.0.2.1')).status).toBe(429)
    kit.ctx.clock.advance(901_000)
    expect((await login(OPERATOR.password, '192.0.2.1')).status).toBe(200)
  }, 30_000)

  it('ignores an X-Forwarded-For the gateway did not sign: a direct caller cannot pick its key', async () => {
    for (let i = 0; i < 5; i++)
      expect((await login(`wrong-${i}`, `198.51.100.${i}`, OPERATOR.email, false)).status).toBe(401)
    const spoofed = await login(OPERATOR.password, '198.51.100.99', OPERATOR.email, false)
    expect(spoofed.status).toBe(429)
    expect(storedCount(`${OPERATOR.email}|198.51.100.0`)).toBe(0)
  }, 30_000)

  it('does not count a successful login against the user', async () => {
    // More successes than the per-address limit, from addresses that together pass nothing.
    for (let i = 0; i < 8; i++)
      expect((await login(OPERATOR.password, `192.0.2.${i % 2}`)).status).toBe(200)
    expect(storedCount(`${OPERATOR.email}|*`)).toBe(0)
    for (let i = 0; i < 4; i++) expect((await login('wrong-guess')).status).toBe(401)
    expect((await login(OPERATOR.password)).status).toBe(200)
    expect(storedCount(`${OPERATOR.email}|203.0.113.7`)).toBe(0)
    expect(storedCount(`${OPERATOR.email}|*`)).toBe(4)
  }, 30_000)

  it('takes the ceiling from auth.login_max_per_email', async () => {
    kit.cleanup()
    const made = await authKit({ login: { maxFailures: 2, maxPerEmail: 3, windowS: 900 } })
    kit = made.kit
    app = made.instance.app
    const statuses = (
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => login(`wrong-${i}`, `10.9.0.${i % 2}`)),
      )
    ).map((r) => r.status)
    expect(tally(statuses)).toEqual({ 401: 3, 429: 47 })
  })
})
