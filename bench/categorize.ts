/**
 * Batch categorization in-process: 200,000 transactions through a tenant's categorizer (built-in
 * rules, a few tenant rules including a regex, lessons from overrides, a trained naive Bayes
 * model). Target ≥ 200,000 transactions/s. Reference in the same run: the floor any categorizer
 * pays — lower-casing and splitting each description once.
 * Run: `bun bench/categorize.ts`
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { NaiveBayes } from '../services/categorizer/bayes.ts'
import { defaultRules, type Rule } from '../services/categorizer/default-rules.ts'
import { type CategorizeInput, Categorizer, type Learned } from '../services/categorizer/engine.ts'
import { generateDemo } from '../services/parser/demo.ts'
import { sized } from './support.ts'

const N = sized(200_000, 2_000)
const TARGET = 200_000

const labelled = JSON.parse(
  readFileSync(join(import.meta.dir, '../test/fixtures/categorization-eval.json'), 'utf8'),
) as Array<CategorizeInput & { category: string }>
const demo = generateDemo({ days: 400, seed: 9, end: '2024-12-31' })
const pool: CategorizeInput[] = [...labelled, ...demo]
const batch: CategorizeInput[] = Array.from({ length: N }, (_, i) => pool[i % pool.length]!)

const tenantRule = (id: string, over: Partial<Rule>): Rule => ({
  id,
  name: id,
  match: 'keyword',
  pattern: 'x',
  category: 'Other',
  priority: 100,
  confidence: 0.9,
  direction: null,
  minAmount: null,
  maxAmount: null,
  counterparty: null,
  active: true,
  builtin: false,
  ...over,
})
const rules = [
  tenantRule('rul_a', { pattern: 'kamau hardware|mama njeri grocery', category: 'Inventory' }),
  tenantRule('rul_b', {
    match: 'regex',
    pattern: 'acc\\.\\s*shop\\s*\\d+',
    category: 'Rent',
    direction: 'out',
  }),
  tenantRule('rul_c', { pattern: 'salary', category: 'Salaries', minAmount: 1_000_000 }),
  ...defaultRules,
]
const learned: Learned = {
  byCounterparty: new Map([['out:mercy atieno', 'Salaries']]),
  byDescription: new Map([['out:school fees sunrise academy', 'Other']]),
  byTransaction: new Map(),
}
const model = new NaiveBayes()
for (const r of labelled) model.add(r, r.category as never)
const categorizer = new Categorizer(rules, learned, model)

// Warm up, then measure.
for (let i = 0; i < Math.min(20_000, N); i++) categorizer.categorize(batch[i]!)
const t0 = performance.now()
const results = batch.map((t) => categorizer.categorize(t))
const s = (performance.now() - t0) / 1000
const rate = N / s

const t1 = performance.now()
let words = 0
for (const t of batch) words += t.description.toLowerCase().split(/[^a-z0-9]+/).length
const refS = (performance.now() - t1) / 1000

const sources = results.reduce<Record<string, number>>((acc, r) => {
  acc[r.source] = (acc[r.source] ?? 0) + 1
  return acc
}, {})
console.log(
  `categorized ${N.toLocaleString()} transactions in ${(s * 1000).toFixed(0)} ms: ${Math.round(rate).toLocaleString()} tx/s (by source ${JSON.stringify(sources)})`,
)
console.log(
  `reference  lower-case + split only: ${Math.round(N / refS).toLocaleString()} tx/s (${words} words); categorizer costs ${(s / refS).toFixed(1)}× that`,
)
console.log(
  `target ≥ ${TARGET.toLocaleString()} tx/s: ${rate >= TARGET ? 'met' : 'MISSED'} (ratio to target ${(rate / TARGET).toFixed(2)}×)`,
)
