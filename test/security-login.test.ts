import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

const PASSWORD = 'Throttle-Test-Passphrase-63'

/**
 * Issue 15: concurrent guesses through the gateway cannot overtake the login throttle; and one
 * throttle holds whichever door a guess knocks at (the gateway or the auth port). Each test signs
 * in users of its own, made before any guessing, so the tests pass alone and in any order.
 */
describe('login throttle through the gateway', () => {
  let p: TestPlatform
  /** One person per test: guessing at one never locks another test's. */
  const people = ['burst', 'ghost-neighbour', 'auth-port', 'gateway-after-port'].map(
    (name) => `${name}@platform.test`,
  )

  beforeAll(async () => {
    // The gateway's per-IP limit would answer most of the burst itself: lift it so every guess
    // reaches auth and the throttle is what is measured.
    p = await startTestPlatform({
      only: 'gateway,auth,broker',
      env: { MMP_RATE_LIMIT_IP: '100000' },
    })
    const operator = await p.login()
    for (const email of people) {
      const made = await api(p.gateway, operator).post('/api/v1/auth/users', {
        tenant_id: 'platform',
        email,
        role: 'Viewer',
        password: PASSWORD,
      })
      expect(made.status).toBe(201)
    }
  }, 60_000)
  afterAll(() => p?.dispose())

  const login = async (email: string, password: string, base = p.gateway) =>
    (
      await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      })
    ).status
  const attempts = (key: string) => {
    const db = new Database(join(p.dataDir, 'platform', 'auth.db'), { readonly: true })
    try {
      return (
        db
          .query<{ count: number }, [string]>('SELECT count FROM login_failures WHERE key = ?')
          .get(key)?.count ?? 0
      )
    } finally {
      db.close()
    }
  }
  const tally = (statuses: number[]) =>
    statuses.reduce<Record<number, number>>((acc, s) => {
      acc[s] = (acc[s] ?? 0) + 1
      return acc
    }, {})
  const guess = (email: string, n: number, base?: string) =>
    Promise.all(Array.from({ length: n }, (_, i) => login(email, `wrong-guess-${i}`, base)))

  it('evaluates at most 5 of 300 concurrent guesses and refuses the right password after them', async () => {
    const email = people[0]!
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => login(email, i === 30 ? PASSWORD : `wrong-guess-${i}`)),
    )
    expect(tally(statuses)).toEqual({ 401: 5, 429: 295 })
    expect(statuses[30]).toBe(429)
    expect(attempts(`${email}|127.0.0.1`)).toBe(5)
    expect(await login(email, PASSWORD)).toBe(429)
  })

  it('evaluates at most 5 of 40 concurrent guesses for another email, its neighbour unlocked', async () => {
    const statuses = await guess('ghost@mmp.test', 40)
    expect(tally(statuses)).toEqual({ 401: 5, 429: 35 })
    expect(attempts('ghost@mmp.test|127.0.0.1')).toBe(5)
    // Another person's throttle is theirs alone.
    expect(await login(people[1]!, PASSWORD)).toBe(200)
  })

  it('refuses the right password at the auth port once guesses through the gateway locked it', async () => {
    const email = people[2]!
    expect(tally(await guess(email, 5))).toEqual({ 401: 5 })
    expect(await login(email, PASSWORD)).toBe(429)
    expect(await login(email, PASSWORD, p.url('auth'))).toBe(429)
    expect(attempts(`${email}|127.0.0.1`)).toBe(5)
  })

  it('refuses the right password through the gateway once guesses at the auth port locked it', async () => {
    const email = people[3]!
    expect(tally(await guess(email, 5, p.url('auth')))).toEqual({ 401: 5 })
    expect(await login(email, PASSWORD, p.url('auth'))).toBe(429)
    expect(await login(email, PASSWORD)).toBe(429)
    expect(attempts(`${email}|127.0.0.1`)).toBe(5)
  })
})
