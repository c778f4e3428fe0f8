import { describe, expect, it } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from './config.ts'

describe('instance.<service>: which instance of a service this process is', () => {
  it('defaults to the address each service listens on, which is its discovery entry', () => {
    const c = loadConfig({ env: {}, portOffset: 100 })
    expect(c.self.analytics).toBe('http://127.0.0.1:8100')
    expect(c.discovery.analytics).toEqual([c.self.analytics])
  })

  it('is set per service from the environment or the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmp-config-'))
    const file = join(dir, 'mmp.toml')
    writeFileSync(
      file,
      '[discovery]\nanalytics = ["http://10.0.0.2:8000", "http://10.0.0.3:8000"]\n' +
        '[instance]\nanalytics = "http://10.0.0.3:8000/"\n',
    )
    expect(loadConfig({ configFile: file, env: {} }).self.analytics).toBe('http://10.0.0.3:8000')
    const c = loadConfig({
      configFile: file,
      env: { MMP_INSTANCE_ANALYTICS: 'http://10.0.0.2:8000' },
    })
    expect(c.self.analytics).toBe('http://10.0.0.2:8000')
  })

  it('refuses a URL that is not one, or a service that does not exist', () => {
    expect(() => loadConfig({ env: { MMP_INSTANCE_CASHFLOW: 'not a url' } })).toThrow(
      /instance\.cashflow .*not a URL/,
    )
    const dir = mkdtempSync(join(tmpdir(), 'mmp-config-'))
    const file = join(dir, 'mmp.toml')
    writeFileSync(file, '[instance]\nanalytic = "http://10.0.0.3:8000"\n')
    expect(() => loadConfig({ configFile: file, env: {} })).toThrow(/'analytic' is not a service/)
  })
})
