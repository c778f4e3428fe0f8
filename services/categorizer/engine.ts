import type { Kind } from '../../schema/vocabulary.ts'
import type { NaiveBayes } from './bayes.ts'
import type { Rule } from './default-rules.ts'
import { applyKind } from './kinds.ts'
import { compileSafeRegex } from './regex-safety.ts'
import { type Category, counterpartyKey, keyOfNormalised, lessonKey, normalise } from './text.ts'

export interface CategorizeInput {
  transaction_id?: string | null
  description: string
  amount?: number | null
  direction?: 'in' | 'out' | null
  counterparty_name?: string | null
  counterparty_phone?: string | null
  /** What the entry is (a charge, a Fuliza draw…): it bounds the category (kinds.ts). */
  kind?: Kind | null
}

export type ResultSource = 'rule' | 'override' | 'ml' | 'default'

export interface CategorizeResult {
  category: Category
  confidence: number
  source: ResultSource
  rule_id: string | null
}

interface Compiled {
  rule: Rule
  /** Lower is better: tenant rules before built-ins, then priority desc, then confidence desc. */
  rank: number
  regex: RegExp | null
  counterparty: string | null
}

/** What overrides taught a tenant (keys from text.ts). */
export interface Learned {
  byCounterparty: Map<string, Category>
  byDescription: Map<string, Category>
  /** Per-transaction overrides. */
  byTransaction: Map<string, Category>
}

/** The model is used only when it is at least this sure. */
export const ML_THRESHOLD = 0.6
const DEFAULT: CategorizeResult = {
  category: 'Other',
  confidence: 0.3,
  source: 'default',
  rule_id: null,
}

/**
 * A tenant's rules compiled for speed: keyword phrases are indexed by their first word, so a
 * transaction costs one normalisation, one split and a map lookup per word, whatever the number
 * of rules; regex rules (few) are tried one by one.
 */
export class Categorizer {
  private readonly byWord = new Map<string, Array<{ c: Compiled; rest: string[] }>>()
  private readonly regexRules: Compiled[] = []

  constructor(
    rules: readonly Rule[],
    private readonly learned: Learned | null = null,
    private readonly model: NaiveBayes | null = null,
  ) {
    const active = rules.filter((r) => r.active)
    // A tenant's own rule says what the owner means: it outranks every built-in rule whatever
    // the priority numbers (built-in priorities only order the built-ins among themselves).
    const ordered = [...active].sort(
      (a, b) =>
        Number(a.builtin) - Number(b.builtin) ||
        b.priority - a.priority ||
        b.confidence - a.confidence ||
        a.id.localeCompare(b.id),
    )
    ordered.forEach((rule, rank) => {
      const c: Compiled = {
        rule,
        rank,
        regex: null,
        counterparty: rule.counterparty ? ` ${normalise(rule.counterparty)} ` : null,
      }
      if (rule.match === 'regex') {
        // '.' (any text) is the catch-all: no need to run a regex for it.
        c.regex = rule.pattern === '.' ? null : compileSafeRegex(rule.pattern)
        this.regexRules.push(c)
        return
      }
      for (const phrase of rule.pattern.split('|')) {
        const words = normalise(phrase).split(' ').filter(Boolean)
        if (words.length === 0) continue
        const list = this.byWord.get(words[0]!) ?? []
        list.push({ c, rest: words.slice(1) })
        this.byWord.set(words[0]!, list)
      }
    })
  }

  /** The best rule for a transaction, or null. */
  matchRule(t: CategorizeInput): Rule | null {
    const cp = t.counterparty_name ? normalise(t.counterparty_name) : ''
    return this.bestRule(t, normalise(t.description), cp)
  }

  /**
   * The hot path: one pass over the words of the normalised description and counterparty; the
   * first word of each keyword phrase finds its rules, and a candidate is checked only when it
   * would beat the best so far.
   */
  private bestRule(t: CategorizeInput, desc: string, cp: string): Rule | null {
    const words = (cp ? `${desc} ${cp}` : desc).split(' ')
    const cpPadded = cp ? ` ${cp} ` : ''
    const cents = typeof t.amount === 'number' ? Math.round(t.amount * 100) : null
    const direction = t.direction ?? null
    let best: Compiled | null = null
    for (let i = 0; i < words.length; i++) {
      const list = this.byWord.get(words[i]!)
      if (list === undefined) continue
      for (let k = 0; k < list.length; k++) {
        const entry = list[k]!
        const c = entry.c
        if (best !== null && best.rank <= c.rank) continue
        if (!fits(c, direction, cents, cpPadded)) continue
        const rest = entry.rest
        let ok = true
        for (let j = 0; j < rest.length; j++) {
          if (words[i + 1 + j] !== rest[j]) {
            ok = false
            break
          }
        }
        if (ok) best = c
      }
    }
    for (let k = 0; k < this.regexRules.length; k++) {
      const c = this.regexRules[k]!
      if (best !== null && best.rank <= c.rank) continue
      if (!fits(c, direction, cents, cpPadded)) continue
      if (
        c.regex === null ||
        c.regex.test(
          t.counterparty_name ? `${t.description} ${t.counterparty_name}` : t.description,
        )
      )
        best = c
    }
    return best === null ? null : best.rule
  }

  /**
   * Decides a category: this transaction's override, then what overrides taught (same
   * counterparty, then same description), then the best rule, then the tenant's model when it is
   * sure enough, else Other. The entry's kind then bounds it (kinds.ts): a loan drawn is never
   * Revenue, and a charge is Other unless the owner's rule or lessons say otherwise. This
   * transaction's own override is the owner's word on it and stands as given.
   */
  categorize(t: CategorizeInput): CategorizeResult {
    const own = t.transaction_id ? this.learned?.byTransaction.get(t.transaction_id) : undefined
    if (own) return { category: own, confidence: 1, source: 'override', rule_id: null }
    if (!t.kind) return this.decide(t).result
    const { result, ownWord } = this.decide(t)
    return applyKind(result, { kind: t.kind, ownWord })
  }

  /** The category before the kind bounds it, and whether the owner's rule or lessons gave it. */
  private decide(t: CategorizeInput): { result: CategorizeResult; ownWord: boolean } {
    const desc = normalise(t.description)
    const cp = t.counterparty_name ? normalise(t.counterparty_name) : ''
    const l = this.learned
    if (l) {
      const directions = t.direction ? [t.direction] : (['out', 'in'] as const)
      const cpKey = cp || counterpartyKey(null, t.counterparty_phone)
      const descKey = l.byDescription.size ? keyOfNormalised(desc) : ''
      for (const d of directions) {
        const byCp =
          cpKey && l.byCounterparty.size ? l.byCounterparty.get(lessonKey(d, cpKey)) : undefined
        if (byCp) return { result: lesson(byCp, 0.95), ownWord: true }
        const byDesc = descKey ? l.byDescription.get(lessonKey(d, descKey)) : undefined
        if (byDesc) return { result: lesson(byDesc, 0.9), ownWord: true }
      }
    }
    const rule = this.bestRule(t, desc, cp)
    if (rule) {
      const result: CategorizeResult = {
        category: rule.category,
        confidence: rule.confidence,
        source: 'rule',
        rule_id: rule.id,
      }
      return { result, ownWord: !rule.builtin }
    }
    if (this.model) {
      const p = this.model.predict(t)
      if (p && p.confidence >= ML_THRESHOLD) {
        const result: CategorizeResult = {
          category: p.category,
          confidence: Math.round(p.confidence * 100) / 100,
          source: 'ml',
          rule_id: null,
        }
        return { result, ownWord: false }
      }
    }
    return { result: DEFAULT, ownWord: false }
  }
}

function lesson(category: Category, confidence: number): CategorizeResult {
  return { category, confidence, source: 'override', rule_id: null }
}

function fits(
  c: Compiled,
  direction: string | null,
  cents: number | null,
  cpPadded: string,
): boolean {
  const r = c.rule
  if (r.direction !== null && r.direction !== direction) return false
  if (r.minAmount !== null && (cents === null || cents < r.minAmount)) return false
  if (r.maxAmount !== null && (cents === null || cents > r.maxAmount)) return false
  if (c.counterparty !== null && !cpPadded.includes(c.counterparty)) return false
  return true
}
