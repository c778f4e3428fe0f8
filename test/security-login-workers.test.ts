import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

const PASSWORD = 'Throttle-Workers-Passphrase-47'

/**
 * One login throttle across workers: with two worker processes sharing the gateway and auth ports,
 * a burst of concurrent guesses reaches both, and still no more than five are evaluated.
 */
describe('login throttle across workers', () => {
  let p: TestPlatform

  beforeAll(async () => {
    p = await startTestPlatform({
      env: { MMP_WORKERS: '2', MMP_RATE_LIMIT_IP: '100000' },
    })
    const operator = await p.login()
    const made = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'platform',
      email: 'workers-burst@platform.test',
      role: 'Viewer',
      password: PASSWORD,
    })
    expect(made.status).toBe(201)
  }, 90_000)
  afterAll(() => p?.dispose())

  const login = async (password: string, base: string) =>
    (
      await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'workers-burst@platform.test', password }),
      })
    ).status

  it('evaluates at most 5 of 300 concurrent guesses through the gateway and the auth port of two workers', async () => {
    const doors = [p.gateway, p.url('auth')]
    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        login(i === 40 ? PASSWORD : `wrong-guess-${i}`, doors[i % 2]!),
      ),
    )
    const tally: Record<number, number> = {}
    for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1
    expect(tally).toEqual({ 401: 5, 429: 295 })
    expect(await login(PASSWORD, p.gateway)).toBe(429)
  })
})
