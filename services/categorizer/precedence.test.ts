import { describe, expect, it } from 'bun:test'
import { defaultRules, type Rule } from './default-rules.ts'
import { Categorizer } from './engine.ts'

describe('rule precedence', () => {
  it("lets a tenant's own rule win over a built-in rule with a higher priority number", () => {
    const kplc = defaultRules.find((r) => r.pattern.includes('kplc'))!
    const own: Rule = {
      ...kplc,
      id: 'rul_own',
      name: 'Shop power is rent-like',
      pattern: 'kplc',
      category: 'Rent',
      priority: kplc.priority - 50,
      builtin: false,
    }
    const engine = new Categorizer([...defaultRules, own])
    const result = engine.categorize({
      description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 54321678',
      direction: 'out',
      amount: 2000,
    })
    expect(result).toMatchObject({ category: 'Rent', rule_id: 'rul_own', source: 'rule' })
  })
})
