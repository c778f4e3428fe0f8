import { and, eq } from 'drizzle-orm'
import { rules } from '../../schema/categorizer/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { Conflict, invalidField, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor, toMinor } from '../kernel/money.ts'
import { defaultRules, type Rule } from './default-rules.ts'
import type { CreateRuleBody, PatchRuleBody } from './model.ts'
import { compileSafeRegex } from './regex-safety.ts'
import { ruleOf, type TenantStates } from './state.ts'
import { normalise } from './text.ts'

/** A rule as the API shows it (amounts as decimals). */
export function ruleView(r: Rule) {
  return {
    id: r.id,
    name: r.name,
    match: r.match,
    pattern: r.pattern,
    category: r.category,
    priority: r.priority,
    confidence: r.confidence,
    direction: r.direction,
    min_amount: r.minAmount === null ? null : toMajor(r.minAmount),
    max_amount: r.maxAmount === null ? null : toMajor(r.maxAmount),
    counterparty: r.counterparty,
    active: r.active,
    builtin: r.builtin,
    created_at: r.createdAt ?? null,
    updated_at: r.updatedAt ?? null,
  }
}

function checkRule(r: Rule): void {
  if (r.match === 'regex') compileSafeRegex(r.pattern)
  else if (!r.pattern.split('|').some((p) => normalise(p))) {
    throw invalidField('pattern', 'must hold at least one word or number')
  }
  if (r.minAmount !== null && r.maxAmount !== null && r.minAmount > r.maxAmount) {
    throw invalidField('min_amount', 'must not be greater than max_amount')
  }
}

const cents = (v: number | null | undefined, field: string) =>
  v === null || v === undefined ? null : toMinor(v, field)

export function listRules(
  ctx: ServiceContext,
  { tenantId, includeInactive }: { tenantId: string; includeInactive: boolean },
) {
  const db = ctx.registry.tenant('categorizer', tenantId)
  const own = db.orm.select().from(rules).where(eq(rules.tenantId, tenantId)).all().map(ruleOf)
  return [...own, ...defaultRules]
    .filter((r) => includeInactive || r.active)
    .sort((a, b) => b.priority - a.priority || Number(a.builtin) - Number(b.builtin))
    .map(ruleView)
}

export function createRule(
  ctx: ServiceContext,
  { states, tenantId, body }: { states: TenantStates; tenantId: string; body: CreateRuleBody },
) {
  const now = ctx.clock.now().toISOString()
  const rule: Rule = {
    id: newId('rul'),
    name: body.name ?? body.pattern.slice(0, 100),
    match: body.match ?? 'keyword',
    pattern: body.pattern,
    category: body.category,
    priority: body.priority ?? 100,
    confidence: body.confidence ?? 0.9,
    direction: body.direction ?? null,
    minAmount: cents(body.min_amount, 'min_amount'),
    maxAmount: cents(body.max_amount, 'max_amount'),
    counterparty: body.counterparty ?? null,
    active: body.active ?? true,
    builtin: false,
    createdAt: now,
    updatedAt: now,
  }
  checkRule(rule)
  const db = ctx.registry.tenant('categorizer', tenantId)
  db.write((orm) => orm.insert(rules).values(rowOf(tenantId, rule)).run())
  states.invalidate(tenantId)
  return ruleView(rule)
}

/** A rule as its table row: the same fields, less `builtin` (built-in rules are never stored). */
function rowOf(tenantId: string, r: Rule): typeof rules.$inferInsert {
  const { builtin: _, ...fields } = r
  return { tenantId, ...fields, createdAt: r.createdAt!, updatedAt: r.updatedAt! }
}

function findRule(ctx: ServiceContext, tenantId: string, id: string): Rule {
  if (defaultRules.some((r) => r.id === id)) {
    throw new Conflict(
      `${id} is a built-in rule and cannot be changed; add your own rule with a higher priority`,
    )
  }
  const db = ctx.registry.tenant('categorizer', tenantId)
  const row = db.orm
    .select()
    .from(rules)
    .where(and(eq(rules.tenantId, tenantId), eq(rules.id, id)))
    .get()
  if (!row) throw new NotFound('rule', id)
  return ruleOf(row)
}

/** One rule by id: the tenant's own, or a built-in one; another tenant's id is a 404. */
export function getRule(ctx: ServiceContext, tenantId: string, id: string) {
  const builtIn = defaultRules.find((r) => r.id === id)
  return ruleView(builtIn ?? findRule(ctx, tenantId, id))
}

/** PUT replaces every field given in full; PATCH changes only the fields given. */
export function updateRule(
  ctx: ServiceContext,
  {
    states,
    tenantId,
    id,
    body,
  }: { states: TenantStates; tenantId: string; id: string; body: PatchRuleBody },
) {
  const current = findRule(ctx, tenantId, id)
  const next: Rule = {
    ...current,
    name: body.name ?? current.name,
    match: body.match ?? current.match,
    pattern: body.pattern ?? current.pattern,
    category: body.category ?? current.category,
    priority: body.priority ?? current.priority,
    confidence: body.confidence ?? current.confidence,
    direction: body.direction !== undefined ? body.direction : current.direction,
    minAmount:
      body.min_amount !== undefined ? cents(body.min_amount, 'min_amount') : current.minAmount,
    maxAmount:
      body.max_amount !== undefined ? cents(body.max_amount, 'max_amount') : current.maxAmount,
    counterparty: body.counterparty !== undefined ? body.counterparty : current.counterparty,
    active: body.active ?? current.active,
    updatedAt: ctx.clock.now().toISOString(),
  }
  checkRule(next)
  const db = ctx.registry.tenant('categorizer', tenantId)
  db.write((orm) =>
    orm
      .update(rules)
      .set(rowOf(tenantId, next))
      .where(and(eq(rules.tenantId, tenantId), eq(rules.id, id)))
      .run(),
  )
  states.invalidate(tenantId)
  return ruleView(next)
}

export function deleteRule(
  ctx: ServiceContext,
  { states, tenantId, id }: { states: TenantStates; tenantId: string; id: string },
) {
  findRule(ctx, tenantId, id)
  const db = ctx.registry.tenant('categorizer', tenantId)
  db.write((orm) =>
    orm
      .delete(rules)
      .where(and(eq(rules.tenantId, tenantId), eq(rules.id, id)))
      .run(),
  )
  states.invalidate(tenantId)
}
