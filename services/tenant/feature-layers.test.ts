import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/tenant/migrations.ts'
import type { Role } from '../kernel/roles.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { fakeClient } from './fake-client.ts'
import {
  applyFeatureChange,
  type FeatureLayers,
  parseLayers,
  resolveFeatures,
} from './feature-layers.ts'
import { createTenantsApp } from './routes.ts'

const PRO = { advanced_analytics: true, bulk_upload: true, api_access: true }
const FREE = { advanced_analytics: false, bulk_upload: true, api_access: true }

describe('feature layers', () => {
  const change = (layers: FeatureLayers, c: Record<string, boolean | null>, byOperator: boolean) =>
    applyFeatureChange({ defaults: PRO, layers, change: c, byOperator, plan: 'pro' })

  it("keeps the operator's switch off whatever the tenant sends, naming the operator", () => {
    const off = change(
      { operator: {}, tenant: {} },
      { api_access: false, bulk_upload: false },
      true,
    )
    // The tenant returning a flag to "its default" clears only its own toggle.
    const cleared = change(off, { api_access: null }, false)
    expect(resolveFeatures(PRO, cleared)).toMatchObject({
      features: { api_access: false, bulk_upload: false },
      held_by: { api_access: 'operator', bulk_upload: 'operator' },
    })
    expect(() => change(off, { bulk_upload: true }, false)).toThrow(/platform operator/)
    try {
      change(off, { bulk_upload: true }, false)
    } catch (err) {
      expect((err as { extra: unknown }).extra).toMatchObject({ held_by: 'operator' })
    }
  })

  it('lets the tenant switch off and back on inside what the plan allows, never past it', () => {
    const own = change({ operator: {}, tenant: {} }, { bulk_upload: false }, false)
    expect(resolveFeatures(PRO, own).held_by.bulk_upload).toBe('tenant')
    const back = change(own, { bulk_upload: true }, false)
    expect(resolveFeatures(PRO, back).features.bulk_upload).toBe(true)
    expect(() =>
      applyFeatureChange({
        defaults: FREE,
        layers: { operator: {}, tenant: {} },
        change: { advanced_analytics: true },
        byOperator: false,
        plan: 'free',
      }),
    ).toThrow(/free plan does not include/)
  })

  it("keeps the tenant's own switch off under an operator grant, and the grant after a clear", () => {
    const granted = applyFeatureChange({
      defaults: FREE,
      layers: { operator: {}, tenant: {} },
      change: { advanced_analytics: true },
      byOperator: true,
      plan: 'free',
    })
    expect(resolveFeatures(FREE, granted).held_by.advanced_analytics).toBe('operator')
    const off = change(granted, { advanced_analytics: false }, false)
    expect(resolveFeatures(FREE, off).features.advanced_analytics).toBe(false)
  })

  it("reads a flat stored object (one layer) as the operator's", () => {
    expect(parseLayers('{"api_access":false}')).toEqual({
      operator: { api_access: false },
      tenant: {},
    })
    expect(parseLayers('not json')).toEqual({ operator: {}, tenant: {} })
  })
})

describe("PUT /tenants/{id}/features: the operator's restrictions hold", () => {
  let kit: TestKit
  let app: ReturnType<typeof createTenantsApp>
  const operator = { tenantId: 'platform', role: 'Admin' as Role }
  const admin = { tenantId: 'flags-a', role: 'Admin' as Role }

  beforeAll(async () => {
    kit = await createTestKit('tenant', { migrations })
    kit.ctx.client = fakeClient()
    app = createTenantsApp(kit.ctx)
    const made = await put('POST', '/api/v1/tenants', operator, {
      id: 'flags-a',
      name: 'Flags A',
      plan: 'pro',
      admin_email: 'boss@flags-a.test',
    })
    expect(made.status).toBe(201)
  })
  afterAll(() => kit.cleanup())

  async function put(
    method: string,
    path: string,
    who: { tenantId: string; role: Role },
    body: unknown,
  ) {
    const res = await app.handle(
      new Request(`http://tenant${path}`, {
        method,
        headers: { ...(await kit.authFor(who)), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    )
    return { status: res.status, body: await res.json() }
  }

  it('refuses the tenant Admin lifting them, and says which layer holds each flag', async () => {
    const path = '/api/v1/tenants/flags-a/features'
    const off = await put('PUT', path, operator, { api_access: false, bulk_upload: false })
    expect(off.status).toBe(200)
    const lift = await put('PUT', path, admin, { api_access: null, bulk_upload: true })
    expect(lift.status).toBe(402)
    expect(lift.body).toMatchObject({ code: 'FEATURE_DISABLED', feature: 'bulk_upload' })
    const clear = await put('PUT', path, admin, { api_access: null })
    expect(clear.status).toBe(200)
    expect(clear.body).toMatchObject({
      features: { api_access: false, bulk_upload: false, advanced_analytics: true },
      operator_overrides: { api_access: false, bulk_upload: false },
      held_by: { api_access: 'operator', bulk_upload: 'operator', advanced_analytics: 'plan' },
    })
    expect(kit.registry.placement('flags-a').features).toMatchObject({
      api_access: false,
      bulk_upload: false,
    })
  })
})
