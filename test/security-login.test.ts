import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'

/** Issue 15: concurrent guesses through the gateway cannot overtake the login throttle. */
describe('login throttle through the gateway', () => {
  let p: TestPlatform

  beforeAll(async () => {
    // The gateway's per-IP limit would answer most of the burst itself: lift it so every guess
    // reaches auth and the throttle is what is measured.
    p = await startTestPlatform({
      only: 'gateway,auth,broker',
      env: { MMP_RATE_LIMIT_IP: '100000' },
    })
  })
  afterAll(() => p?.dispose())

  const login = async (email: string, password: string) =>
    (
      await fetch(`${p.gateway}/api/v1/auth/login`, {
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

  it('evaluates at most 5 of 300 concurrent guesses and refuses the right password after them', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        login(OPERATOR.email, i === 30 ? OPERATOR.password : `wrong-guess-${i}`),
      ),
    )
    expect(tally(statuses)).toEqual({ 401: 5, 429: 295 })
    expect(statuses[30]).toBe(429)
    expect(attempts(`${OPERATOR.email}|127.0.0.1`)).toBe(5)
    expect(await login(OPERATOR.email, OPERATOR.password)).toBe(429)
  })

  it('evaluates at most 5 of 40 concurrent guesses for another email', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login('ghost@mmp.test', `wrong-guess-${i}`)),
    )
    expect(tally(statuses)).toEqual({ 401: 5, 429: 35 })
    expect(attempts('ghost@mmp.test|127.0.0.1')).toBe(5)
    // The operator stays locked for its window whatever the other email does.
    expect(await login(OPERATOR.email, OPERATOR.password)).toBe(429)
  })
})
