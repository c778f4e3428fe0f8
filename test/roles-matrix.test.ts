import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Action, can } from '../services/kernel/roles.ts'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * The DESIGN §4 role matrix, checked through the gateway: every role against a representative
 * route of each service. Add a service by appending rows; `action` is the column of the matrix
 * the route belongs to, and `otherTenant` marks a route that names a tenant other than the
 * caller's (only the operator may).
 */
interface Row {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  body?: (who: string) => unknown
  action: Action
  otherTenant?: boolean
}

const rows: Row[] = [
  // tenant service
  { method: 'GET', path: '/api/v1/tenants/acme', action: 'read' },
  { method: 'GET', path: '/api/v1/tenants/acme/features', action: 'read' },
  { method: 'GET', path: '/api/v1/tenants/acme/usage', action: 'read' },
  {
    method: 'PATCH',
    path: '/api/v1/tenants/acme',
    body: () => ({ settings: { matrix: true } }),
    action: 'admin',
  },
  {
    method: 'PUT',
    path: '/api/v1/tenants/acme/features',
    body: () => ({ bulk_upload: true }),
    action: 'admin',
  },
  { method: 'GET', path: '/api/v1/tenants/acme/users', action: 'admin' },
  {
    method: 'POST',
    path: '/api/v1/tenants/acme/users',
    body: (who) => ({ email: `invited-by-${who}@acme.test`, role: 'Viewer' }),
    action: 'admin',
  },
  {
    method: 'PUT',
    path: '/api/v1/tenants/acme/upgrade',
    body: () => ({ plan: 'pro' }),
    action: 'admin',
  },
  { method: 'GET', path: '/api/v1/tenants', action: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/tenants',
    body: (who) => ({ id: `made-by-${who}`, name: 'Matrix', admin_email: `a@${who}.test` }),
    action: 'operator',
  },
  { method: 'POST', path: '/api/v1/tenants/acme/resume', action: 'operator' },
  {
    method: 'DELETE',
    path: '/api/v1/tenants/no-such-tenant?confirm=no-such-tenant',
    action: 'operator',
  },
  { method: 'GET', path: '/api/v1/tenants/beta', action: 'read', otherTenant: true },
  { method: 'GET', path: '/api/v1/tenants/beta/features', action: 'read', otherTenant: true },
  // auth service
  { method: 'GET', path: '/api/v1/auth/users', action: 'admin' },
  {
    method: 'POST',
    path: '/api/v1/auth/users',
    body: (who) => ({ tenant_id: 'acme', email: `created-by-${who}@acme.test`, role: 'Viewer' }),
    action: 'admin',
  },
  { method: 'DELETE', path: '/api/v1/auth/users/usr_does_not_exist', action: 'admin' },
  { method: 'GET', path: '/api/v1/auth/users?tenant_id=beta', action: 'admin', otherTenant: true },
  // analytics
  { method: 'GET', path: '/api/v1/analytics/summary', action: 'read' },
  { method: 'GET', path: '/api/v1/analytics/transactions', action: 'read' },
  { method: 'GET', path: '/api/v1/analytics/customers', action: 'read' },
  { method: 'GET', path: '/api/v1/analytics/insights', action: 'read' },
  { method: 'GET', path: '/api/v1/analytics/export?format=csv', action: 'analyze' },
  {
    method: 'GET',
    path: '/api/v1/analytics/summary?tenant_id=beta',
    action: 'read',
    otherTenant: true,
  },
  // cashflow
  { method: 'GET', path: '/api/v1/cashflow/summary/acme', action: 'read' },
  { method: 'GET', path: '/api/v1/cashflow/daily', action: 'read' },
  { method: 'GET', path: '/api/v1/cashflow/forecast', action: 'read' },
  { method: 'POST', path: '/api/v1/cashflow/analyze', body: () => ({}), action: 'read' },
  {
    method: 'PUT',
    path: '/api/v1/cashflow/settings',
    body: () => ({ low_balance_threshold: 100 }),
    action: 'admin',
  },
  { method: 'GET', path: '/api/v1/cashflow/summary/beta', action: 'read', otherTenant: true },
  // categorizer
  { method: 'GET', path: '/api/v1/categorize/rules', action: 'read' },
  {
    method: 'POST',
    path: '/api/v1/categorize/single',
    body: () => ({ description: 'KPLC prepaid token' }),
    action: 'analyze',
  },
  {
    method: 'POST',
    path: '/api/v1/categorize',
    body: () => ({ transactions: [{ description: 'Rent June' }] }),
    action: 'analyze',
  },
  {
    method: 'POST',
    path: '/api/v1/categorize/rules',
    body: (who) => ({
      name: `rule by ${who}`,
      match: 'keyword',
      pattern: `kw-${who}`,
      category: 'Inventory',
      priority: 100,
    }),
    action: 'manage',
  },
  // parser
  {
    method: 'POST',
    path: '/api/v1/parser/transactions',
    body: (who) => ({
      transactions: [
        {
          occurred_at: '2026-10-01T10:00:00Z',
          amount: 100,
          direction: 'in',
          description: `matrix ${who}`,
          receipt_number: `MTX${who.toUpperCase()}1`,
        },
      ],
    }),
    action: 'manage',
  },
  { method: 'POST', path: '/api/v1/parser/sms', body: () => ({ messages: [] }), action: 'manage' },
  // billing
  { method: 'GET', path: '/api/v1/billing/plans', action: 'read' },
  { method: 'GET', path: '/api/v1/billing/subscriptions/acme', action: 'read' },
  { method: 'GET', path: '/api/v1/billing/usage/acme', action: 'read' },
  { method: 'GET', path: '/api/v1/billing/invoices', action: 'admin' },
  {
    method: 'POST',
    path: '/api/v1/billing/plans',
    body: (who) => ({
      id: `plan-${who}`,
      name: `Plan ${who}`,
      price: 10,
      currency: 'KES',
      limits: { transactions: 10, statements: 1, users: 1, webhook_endpoints: 1 },
      features: { advanced_analytics: false, bulk_upload: false, api_access: false },
    }),
    action: 'operator',
  },
  { method: 'GET', path: '/api/v1/billing/subscriptions/beta', action: 'read', otherTenant: true },
  { method: 'GET', path: '/api/v1/billing/usage/beta', action: 'read', otherTenant: true },
  // payment
  {
    method: 'POST',
    path: '/api/v1/payments/stkpush',
    body: () => ({
      tenant_id: 'acme',
      phone_number: '254712345678',
      amount: 10,
      account_reference: 'MATRIX',
      transaction_desc: 'Matrix',
    }),
    action: 'pay',
  },
  {
    method: 'POST',
    path: '/api/v1/payments/b2c',
    body: () => ({
      tenant_id: 'acme',
      phone_number: '254712345678',
      amount: 10,
      remarks: 'Matrix refund',
    }),
    action: 'pay',
  },
  { method: 'GET', path: '/api/v1/payments/status/ws_CO_does_not_exist', action: 'read' },
  { method: 'GET', path: '/api/v1/payments', action: 'read' },
  { method: 'POST', path: '/api/v1/payments/reconcile', action: 'operator' },
  {
    method: 'POST',
    path: '/api/v1/payments/stkpush',
    body: () => ({
      tenant_id: 'beta',
      phone_number: '254712345678',
      amount: 10,
      account_reference: 'MATRIX',
      transaction_desc: 'Matrix',
    }),
    action: 'pay',
    otherTenant: true,
  },
  // webhook
  { method: 'GET', path: '/api/v1/webhooks', action: 'admin' },
  {
    method: 'POST',
    path: '/api/v1/webhooks',
    body: (who) => ({
      tenant_id: 'acme',
      url: `http://127.0.0.1:9/${who}`,
      events: ['payment.success'],
      secret: `secret-of-${who}-in-the-roles-matrix`,
    }),
    action: 'admin',
  },
  { method: 'GET', path: '/api/v1/webhooks/deliveries', action: 'admin' },
  {
    method: 'POST',
    path: '/api/v1/webhooks/trigger',
    body: () => ({
      event: 'payment.success',
      data: { transaction_id: 'txn_matrix', amount: 1, phone_number: '254712345678' },
    }),
    action: 'admin',
  },
  { method: 'GET', path: '/api/v1/webhooks?tenant_id=beta', action: 'admin', otherTenant: true },
]

const who = [
  { name: 'Admin', tenantId: 'acme', role: 'Admin' },
  { name: 'Manager', tenantId: 'acme', role: 'Manager' },
  { name: 'Analyst', tenantId: 'acme', role: 'Analyst' },
  { name: 'Viewer', tenantId: 'acme', role: 'Viewer' },
  { name: 'operator', tenantId: 'platform', role: 'Admin' },
] as const

const expectedAllowed = (w: (typeof who)[number], row: Row) =>
  can(w, row.action) && (!row.otherTenant || w.tenantId === 'platform')

describe('role matrix (DESIGN §4) across services', () => {
  let p: TestPlatform
  const tokens = new Map<string, string>()

  beforeAll(async () => {
    p = await startTestPlatform()
    const operator = await p.login()
    tokens.set('operator', operator)
    const op = api(p.gateway, operator)
    for (const id of ['acme', 'beta']) {
      const res = await op.post('/api/v1/tenants', {
        id,
        name: id,
        plan: 'pro',
        admin_email: `admin@${id}.test`,
        admin_password: 'matrix-password-1',
      })
      expect(res.status).toBe(201)
    }
    tokens.set('Admin', await p.login('admin@acme.test', 'matrix-password-1'))
    for (const role of ['Manager', 'Analyst', 'Viewer']) {
      const email = `${role.toLowerCase()}@acme.test`
      const res = await op.post('/api/v1/auth/users', {
        tenant_id: 'acme',
        email,
        role,
        password: 'matrix-password-1',
      })
      expect(res.status).toBe(201)
      tokens.set(role, await p.login(email, 'matrix-password-1'))
    }
  }, 60_000)
  afterAll(() => p.dispose())

  for (const row of rows) {
    for (const w of who) {
      const allowed = expectedAllowed(w, row)
      it(`${allowed ? 'allows' : 'refuses'} ${w.name}: ${row.method} ${row.path}`, async () => {
        const client = api(p.gateway, tokens.get(w.name))
        const body = row.body?.(w.name.toLowerCase())
        const res =
          row.method === 'GET' || row.method === 'DELETE'
            ? await client[row.method === 'GET' ? 'get' : 'delete'](row.path)
            : await client[row.method.toLowerCase() as 'post' | 'put' | 'patch'](row.path, body)
        const detail = `${res.status} ${JSON.stringify(res.body)}`
        if (allowed) {
          expect([401, 403], detail).not.toContain(res.status)
          expect(res.status, detail).toBeLessThan(500)
        } else {
          expect(res.status, detail).toBe(403)
        }
      })
    }
  }
})
