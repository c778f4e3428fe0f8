import { describe, expect, it } from 'bun:test'
import { ConfigError, loadConfig } from './config.ts'
import { gatewayIdleTimeoutOf, idleTimeoutOf } from './service-start.ts'

/** gateway.idle_timeout_s and gateway.connections_per_address as the gateway part reads them. */
describe('gateway connection settings', () => {
  it('defaults: idle as long as the longest budget plus 10 s, 128 connections per address', () => {
    const c = loadConfig({ env: {} })
    expect(gatewayIdleTimeoutOf(c)).toBe(130)
    expect(idleTimeoutOf(c)).toBe(130)
    expect(c.get<number>('gateway.connections_per_address')).toBe(128)
  })

  it('takes a changed value from the environment', () => {
    const c = loadConfig({
      env: { MMP_GATEWAY_IDLE_TIMEOUT_S: '200', MMP_GATEWAY_CONNECTIONS_PER_ADDRESS: '16' },
    })
    expect(gatewayIdleTimeoutOf(c)).toBe(200)
    // The services' own ports keep theirs.
    expect(idleTimeoutOf(c)).toBe(130)
    expect(c.get<number>('gateway.connections_per_address')).toBe(16)
  })

  it('follows lower budgets when unset, and refuses an idle time shorter than a budget', () => {
    const env = { MMP_GATEWAY_BULK_TIMEOUT_MS: '20000' }
    expect(gatewayIdleTimeoutOf(loadConfig({ env }))).toBe(30)
    expect(
      gatewayIdleTimeoutOf(loadConfig({ env: { ...env, MMP_GATEWAY_IDLE_TIMEOUT_S: '30' } })),
    ).toBe(30)
    const short = () => loadConfig({ env: { ...env, MMP_GATEWAY_IDLE_TIMEOUT_S: '29' } })
    expect(short).toThrow(ConfigError)
    expect(short).toThrow(/gateway.idle_timeout_s: 29 is shorter .* \(30\); set at least 30/)
    expect(() => loadConfig({ env: { MMP_GATEWAY_CONNECTIONS_PER_ADDRESS: '0' } })).toThrow(
      /gateway.connections_per_address/,
    )
  })
})
