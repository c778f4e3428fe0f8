import { describe, expect, it } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig } from './config.ts'

describe('loadConfig', () => {
  it('applies defaults, then the file, then the environment, then flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmp-config-'))
    const file = join(dir, 'mmp.toml')
    writeFileSync(file, 'port_offset = 5\n[gateway]\ntimeout_ms = 2000\n[rate_limit]\nfree = 7\n')
    const c = loadConfig({ configFile: file, env: { MMP_RATE_LIMIT_FREE: '9' }, portOffset: 10 })
    expect(c.get<number>('gateway.timeout_ms')).toBe(2000)
    expect(c.get<number>('rate_limit.free')).toBe(9)
    expect(c.ports.gateway).toBe(9010)
    expect(c.ports.payment).toBe(8017)
    expect(c.get<number>('rate_limit.pro')).toBe(100)
  })

  it('names the key of a wrong value in one line', () => {
    expect(() => loadConfig({ env: { MMP_PORT_OFFSET: 'abc' } })).toThrow(
      /port_offset \(MMP_PORT_OFFSET\): 'abc' is not a whole number/,
    )
    expect(() => loadConfig({ env: { MMP_WEBHOOK_ALLOW_INSECURE: 'maybe' } })).toThrow(ConfigError)
    expect(() => loadConfig({ env: { MMP_MQTT_URL: 'not a url' } })).toThrow(/mqtt.url/)
    expect(() => loadConfig({ env: {}, only: 'payment,nope' })).toThrow(/'nope' is not one of/)
  })

  it('parses retry schedules written as durations', () => {
    const c = loadConfig({ env: { MMP_WEBHOOK_RETRY_SCHEDULE: '0s,1s,500ms,5m' } })
    expect(c.get<number[]>('webhook.retry_schedule')).toEqual([0, 1000, 500, 300000])
  })

  it('refuses unknown keys in the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmp-config-'))
    const file = join(dir, 'mmp.toml')
    writeFileSync(file, 'prot_offset = 5\n')
    expect(() => loadConfig({ configFile: file, env: {} })).toThrow(/prot_offset .*unknown setting/)
  })

  it('builds a static discovery map, overridable per service', () => {
    const c = loadConfig({
      env: { MMP_DISCOVERY_PAYMENT: 'http://10.0.0.5:8007,http://10.0.0.6:8007' },
      portOffset: 0,
    })
    expect(c.discovery.payment).toEqual(['http://10.0.0.5:8007', 'http://10.0.0.6:8007'])
    expect(c.discovery.analytics).toEqual(['http://127.0.0.1:8000'])
  })
})
