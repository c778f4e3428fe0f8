import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

describe('creating a tenant with a first Admin auth refuses', () => {
  let p: TestPlatform
  let operator: string
  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,broker' })
    operator = await p.login()
  })
  afterAll(() => p.dispose())

  it('names the field to fix and leaves no tenant behind', async () => {
    const res = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'weak-co',
      name: 'Weak Co',
      admin_email: 'owner@weak.test',
      admin_password: 'password123',
    })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' })
    expect(res.body.errors).toEqual([
      expect.objectContaining({ field: 'admin_password', message: expect.any(String) }),
    ])
    expect(existsSync(join(p.dataDir, 'tenants', 'weak-co', 'placement.json'))).toBe(false)
    const again = await api(p.gateway, operator).post('/api/v1/tenants', {
      id: 'weak-co',
      name: 'Weak Co',
      admin_email: 'owner@weak.test',
      admin_password: 'tembo-chai-mvua-2031',
    })
    expect(again.status).toBe(201)
  })
})
