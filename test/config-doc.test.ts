import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { settings } from '../daemon/settings.ts'
import { configDocPath, configurationDoc } from '../scripts/config-doc.ts'

/** docs/configuration.md is generated from daemon/settings.ts: a changed setting needs a new doc. */
describe('docs/configuration.md', () => {
  it('is what `bun scripts/config-doc.ts` writes from daemon/settings.ts', () => {
    const doc = readFileSync(configDocPath, 'utf8')
    // One line saying what to do rather than a diff of a 100-line table.
    const stale = doc !== configurationDoc()
    expect(
      stale ? 'stale: run `bun scripts/config-doc.ts` and commit docs/configuration.md' : 'fresh',
    ).toBe('fresh')
  })

  it('names every setting with its environment variable and default', () => {
    const doc = readFileSync(configDocPath, 'utf8')
    for (const s of settings) expect(doc).toContain(`| \`${s.key}\``)
    for (const s of settings) expect(doc).toContain(`\`${s.env}\``)
  })

  it('changes when a setting changes, so the check above can fail', () => {
    const changed = settings.map((s) => (s.key === 'port_offset' ? { ...s, default: 7 } : s))
    expect(configurationDoc(changed)).not.toBe(configurationDoc())
    const added = [...settings, { ...settings[0]!, key: 'new.setting', env: 'MMP_NEW' }]
    expect(configurationDoc(added)).toContain('`new.setting`')
  })
})
