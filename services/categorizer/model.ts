import { t } from 'elysia'
import { CATEGORIES } from './text.ts'

export const CategoryT = t.Union(
  [
    t.Literal(CATEGORIES[0]),
    t.Literal(CATEGORIES[1]),
    t.Literal(CATEGORIES[2]),
    t.Literal(CATEGORIES[3]),
    t.Literal(CATEGORIES[4]),
    t.Literal(CATEGORIES[5]),
    t.Literal(CATEGORIES[6]),
  ],
  { description: 'one of Revenue, Inventory, Rent, Salaries, Transport, Utilities, Other' },
)
const Direction = t.Union([t.Literal('in'), t.Literal('out')])

export const CategorizeItem = t.Object({
  transaction_id: t.Optional(t.Nullable(t.String({ maxLength: 100 }))),
  description: t.String({ minLength: 1, maxLength: 500 }),
  amount: t.Optional(
    t.Nullable(t.Number({ description: 'a negative amount without a direction means money out' })),
  ),
  direction: t.Optional(t.Nullable(Direction)),
  counterparty_name: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
  counterparty_phone: t.Optional(t.Nullable(t.String({ maxLength: 20 }))),
})

export const CategorizeResultT = t.Object({
  category: CategoryT,
  confidence: t.Number(),
  source: t.Union([
    t.Literal('rule'),
    t.Literal('override'),
    t.Literal('ml'),
    t.Literal('default'),
  ]),
  rule_id: t.Nullable(t.String()),
})

export const BatchBody = t.Object({
  tenant_id: t.Optional(t.String()),
  transactions: t.Array(CategorizeItem, { minItems: 1, maxItems: 10000 }),
})

export const SingleBody = t.Composite([
  t.Object({ tenant_id: t.Optional(t.String()) }),
  CategorizeItem,
])

const ruleFields = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  match: t.Union([t.Literal('keyword'), t.Literal('regex')]),
  pattern: t.String({ minLength: 1, maxLength: 500 }),
  category: CategoryT,
  priority: t.Integer({ minimum: 0, maximum: 10000, default: 100 }),
  confidence: t.Number({ minimum: 0, maximum: 1, default: 0.9 }),
  direction: t.Nullable(Direction),
  min_amount: t.Nullable(t.Number({ minimum: 0 })),
  max_amount: t.Nullable(t.Number({ minimum: 0 })),
  counterparty: t.Nullable(t.String({ minLength: 1, maxLength: 200 })),
  active: t.Boolean({ default: true }),
}

export const CreateRuleBody = t.Object({
  tenant_id: t.Optional(t.String()),
  name: t.Optional(ruleFields.name),
  match: t.Optional(ruleFields.match),
  pattern: ruleFields.pattern,
  category: ruleFields.category,
  priority: t.Optional(ruleFields.priority),
  confidence: t.Optional(ruleFields.confidence),
  direction: t.Optional(ruleFields.direction),
  min_amount: t.Optional(ruleFields.min_amount),
  max_amount: t.Optional(ruleFields.max_amount),
  counterparty: t.Optional(ruleFields.counterparty),
  active: t.Optional(ruleFields.active),
})
export type CreateRuleBody = typeof CreateRuleBody.static

export const PatchRuleBody = t.Partial(t.Omit(CreateRuleBody, ['tenant_id']))
export type PatchRuleBody = typeof PatchRuleBody.static

export const RuleT = t.Object(
  {
    id: t.String(),
    name: t.String(),
    match: t.String(),
    pattern: t.String(),
    category: CategoryT,
    priority: t.Integer(),
    confidence: t.Number(),
    direction: t.Nullable(t.String()),
    min_amount: t.Nullable(t.Number()),
    max_amount: t.Nullable(t.Number()),
    counterparty: t.Nullable(t.String()),
    active: t.Boolean(),
    builtin: t.Boolean({ description: 'built-in default rule (read-only)' }),
    created_at: t.Nullable(t.String()),
    updated_at: t.Nullable(t.String()),
  },
  { title: 'Rule' },
)

export const OverrideBody = t.Object({ category: CategoryT })
