import { CATEGORIES, type Category, normalise } from './text.ts'

const STOP = new Set([
  'to',
  'from',
  'the',
  'of',
  'for',
  'at',
  'and',
  'acc',
  'account',
  'pay',
  'bill',
  'customer',
  'transfer',
  'payment',
  'merchant',
  'funds',
  'mpesa',
  'm',
  'pesa',
  'ltd',
  'limited',
  'via',
  'api',
])

export interface Example {
  description: string
  counterparty_name?: string | null
  direction?: 'in' | 'out' | null
}

/** Words a transaction is judged by: description and counterparty words without digits, plus direction. */
export function featuresOf(t: Example): string[] {
  const out: string[] = []
  for (const w of normalise(t.description).split(' ')) {
    if (w.length > 1 && !STOP.has(w) && !/\d/.test(w)) out.push(w)
  }
  if (t.counterparty_name) {
    for (const w of normalise(t.counterparty_name).split(' ')) {
      if (w.length > 1 && !/\d/.test(w)) out.push(`cp:${w}`)
    }
  }
  if (t.direction) out.push(`dir:${t.direction}`)
  return out
}

/**
 * Multinomial naive Bayes with Laplace smoothing over `featuresOf`. Trained per tenant from
 * overrides and confirmed labels; its posterior is the confidence it reports.
 */
export class NaiveBayes {
  private readonly docs = new Map<Category, number>()
  private readonly words = new Map<Category, Map<string, number>>()
  private readonly totals = new Map<Category, number>()
  private readonly vocab = new Set<string>()
  private n = 0

  add(example: Example, category: Category, weight = 1): void {
    this.n += weight
    this.docs.set(category, (this.docs.get(category) ?? 0) + weight)
    let counts = this.words.get(category)
    if (!counts) {
      counts = new Map()
      this.words.set(category, counts)
    }
    for (const f of featuresOf(example)) {
      counts.set(f, (counts.get(f) ?? 0) + weight)
      this.totals.set(category, (this.totals.get(category) ?? 0) + weight)
      this.vocab.add(f)
    }
  }

  get size(): number {
    return this.n
  }

  predict(t: Example): { category: Category; confidence: number } | null {
    if (this.n === 0) return null
    const features = featuresOf(t).filter((f) => this.vocab.has(f))
    if (features.length === 0 || features.every((f) => f.startsWith('dir:'))) return null
    const v = this.vocab.size
    const scores: Array<[Category, number]> = []
    for (const c of CATEGORIES) {
      const d = this.docs.get(c)
      if (!d) continue
      const counts = this.words.get(c)!
      const total = this.totals.get(c) ?? 0
      let s = Math.log(d / this.n)
      for (const f of features) s += Math.log(((counts.get(f) ?? 0) + 1) / (total + v))
      scores.push([c, s])
    }
    const max = Math.max(...scores.map(([, s]) => s))
    let sum = 0
    for (const [, s] of scores) sum += Math.exp(s - max)
    const [category, top] = scores.reduce((a, b) => (b[1] > a[1] ? b : a))
    return { category, confidence: Math.exp(top - max) / sum }
  }
}
