import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

describe('webhook destinations in production mode', () => {
  let p: TestPlatform
  let admin: string
  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,webhook,broker',
      env: { MMP_WEBHOOK_ALLOW_INSECURE: '0' },
    })
    const operator = await p.login()
    await createTenants(p.gateway, operator, 'acme')
    await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'acme',
      email: 'admin@acme.test',
      role: 'Admin',
      password: 'admin-password-1',
    })
    admin = await p.login('admin@acme.test', 'admin-password-1')
  }, 30_000)
  afterAll(() => p?.dispose())

  const register = (url: string) =>
    api(p.gateway, admin).post('/api/v1/webhooks', {
      tenant_id: 'acme',
      url,
      events: ['payment.success'],
      secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
    })

  it.each([
    'https://127.0.0.1/hook',
    'https://127.1.2.3:8443/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://10.0.0.7/hook',
    'https://192.168.0.10/hook',
    'https://100.100.100.100/hook',
    'https://[::1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
    'https://localhost/hook',
    'http://127.0.0.1:8080/hook',
    'http://hooks.example.com/hook',
    'ftp://hooks.example.com/hook',
  ])('refuses %s with 422 naming the url', async (url) => {
    const res = await register(url)
    expect(res.status).toBe(422)
    expect(res.body.errors?.[0]?.field).toBe('url')
  })

  it('refuses moving an endpoint to an internal address', async () => {
    const ok = await register('https://hooks.example.com/hook')
    expect(ok.status).toBe(201)
    const moved = await api(p.gateway, admin).patch(`/api/v1/webhooks/${ok.body.id}`, {
      url: 'https://169.254.169.254/',
    })
    expect(moved.status).toBe(422)
    const trigger = await api(p.gateway, admin).post('/api/v1/webhooks/trigger', {
      event: 'payment.success',
      data: { transaction_id: 't', amount: 1, phone_number: '254700000000' },
    })
    expect(trigger.status).toBe(202)
    expect(trigger.body.deliveries).toHaveLength(1)
  })
})
