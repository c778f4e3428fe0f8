import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defaultRules } from '../services/categorizer/default-rules.ts'
import { Categorizer, type Learned } from '../services/categorizer/engine.ts'
import { counterpartyKey, lessonKey } from '../services/categorizer/text.ts'

interface Labelled {
  description: string
  amount: number
  direction: 'in' | 'out'
  counterparty_name: string | null
  category: string
}
const rows = JSON.parse(
  readFileSync(join(import.meta.dir, 'fixtures/categorization-eval.json'), 'utf8'),
) as Labelled[]

/** Accuracy floor of the built-in rules on the labelled set (measured 0.97 when written). */
const FLOOR = 0.9

function evaluate(c: Categorizer) {
  let right = 0
  const perCategory = new Map<string, { n: number; right: number }>()
  const misses: Labelled[] = []
  for (const r of rows) {
    const got = c.categorize(r).category
    const s = perCategory.get(r.category) ?? { n: 0, right: 0 }
    s.n++
    if (got === r.category) {
      right++
      s.right++
    } else misses.push(r)
    perCategory.set(r.category, s)
  }
  return { accuracy: right / rows.length, perCategory, misses }
}

describe('categorization on the labelled evaluation set', () => {
  it('holds at least 500 labelled transactions over all seven categories', () => {
    expect(rows.length).toBeGreaterThanOrEqual(500)
    expect(new Set(rows.map((r) => r.category)).size).toBe(7)
  })

  it(`categorizes at least ${FLOOR * 100}% right with the built-in rules alone`, () => {
    const { accuracy, perCategory } = evaluate(new Categorizer(defaultRules))
    const lines = [...perCategory].map(
      ([c, s]) => `  ${c.padEnd(10)} ${s.right}/${s.n} (${((s.right / s.n) * 100).toFixed(0)}%)`,
    )
    console.log(
      `categorization accuracy: ${(accuracy * 100).toFixed(1)}% of ${rows.length}\n${lines.join('\n')}`,
    )
    expect(accuracy).toBeGreaterThanOrEqual(FLOOR)
  })

  it('does better once the misses of a few counterparties are overridden', () => {
    const before = evaluate(new Categorizer(defaultRules))
    const learned: Learned = {
      byCounterparty: new Map(),
      byDescription: new Map(),
      byTransaction: new Map(),
    }
    // The owner corrects the first miss of each counterparty (at most ten overrides).
    for (const m of before.misses) {
      const key = counterpartyKey(m.counterparty_name)
      if (!key || learned.byCounterparty.size >= 10) continue
      const k = lessonKey(m.direction, key)
      if (!learned.byCounterparty.has(k)) learned.byCounterparty.set(k, m.category as never)
    }
    const after = evaluate(new Categorizer(defaultRules, learned))
    console.log(
      `after ${learned.byCounterparty.size} overrides: ${(after.accuracy * 100).toFixed(1)}% (was ${(before.accuracy * 100).toFixed(1)}%)`,
    )
    expect(after.accuracy).toBeGreaterThan(before.accuracy)
  })
})
