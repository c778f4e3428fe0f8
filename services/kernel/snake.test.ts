import { describe, expect, it } from 'bun:test'
import { snakeFields } from './snake.ts'

describe('snakeFields', () => {
  it('answers the named columns under their snake_case names, and only those', () => {
    const row = { id: 'x1', tenantId: 't1', previousSecretExpiresAt: null, secret: 's' }
    const out = snakeFields(row, ['id', 'tenantId', 'previousSecretExpiresAt'])
    const typed: { id: string; tenant_id: string; previous_secret_expires_at: null } = out
    expect(typed).toEqual({ id: 'x1', tenant_id: 't1', previous_secret_expires_at: null })
    expect(out).not.toHaveProperty('secret')
  })
})
