import { t } from 'elysia'
import { TransactionEvent } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { overrideCategory } from './consumers.ts'
import type { CategorizeInput } from './engine.ts'
import {
  BatchBody,
  CategorizeResultT,
  CreateRuleBody,
  OverrideBody,
  PatchRuleBody,
  RuleT,
  SingleBody,
} from './model.ts'
import { createRule, deleteRule, getRule, listRules, updateRule } from './rules.ts'
import type { TenantStates } from './state.ts'

const doc = (summary: string) => ({ summary, tags: ['categorizer'], security: [{ bearer: [] }] })
const TenantQuery = t.Object({
  tenant_id: t.Optional(t.String()),
  include_inactive: t.Optional(t.Boolean()),
})

/** A negative amount with no direction is money out (how many ledgers write it). */
function signed(tx: CategorizeInput): CategorizeInput {
  if (typeof tx.amount !== 'number' || tx.amount >= 0) return tx
  return { ...tx, amount: -tx.amount, direction: tx.direction ?? 'out' }
}

/** The categorizer's HTTP controller (SPEC §4 plus rule update/delete and overrides, DESIGN §11). */
/** What a replaced rule's fields are when the new body leaves them out. */
const REPLACED_RULE = {
  priority: 100,
  confidence: 0.9,
  direction: null,
  min_amount: null,
  max_amount: null,
  counterparty: null,
  active: true,
}

export function createCategorizerApp(ctx: ServiceContext, states: TenantStates) {
  /** PUT replaces a rule (left-out fields as REPLACED_RULE); PATCH changes what the body names. */
  const changeRule =
    ({ replace }: { replace: boolean }) =>
    (r: {
      params: { id: string }
      query: { tenant_id?: string }
      body: PatchRuleBody
      actor: Actor
    }) =>
      updateRule(ctx, {
        states,
        tenantId: tenantFor(r.actor, r.query.tenant_id),
        id: r.params.id,
        body: replace ? { ...REPLACED_RULE, ...r.body } : r.body,
      })
  return createServiceApp(ctx, {
    title: 'Categorizer',
    description: 'Rule-based and learned categorization of transactions',
  })
    .post(
      '/api/v1/categorize',
      ({ body, actor }) => {
        const c = states.get(tenantFor(actor, body.tenant_id))
        return { results: body.transactions.map((tx) => c.categorize(signed(tx))) }
      },
      {
        auth: 'analyze',
        body: BatchBody,
        response: { 200: t.Object({ results: t.Array(CategorizeResultT) }) },
        detail: doc('Categorize a batch of transactions (results in input order)'),
      },
    )
    .post(
      '/api/v1/categorize/single',
      ({ body, actor }) => states.get(tenantFor(actor, body.tenant_id)).categorize(signed(body)),
      {
        auth: 'analyze',
        body: SingleBody,
        response: { 200: CategorizeResultT },
        detail: doc('Categorize one transaction'),
      },
    )
    .get(
      '/api/v1/categorize/rules',
      ({ query, actor }) => ({
        data: listRules(ctx, {
          tenantId: tenantFor(actor, query.tenant_id),
          includeInactive: query.include_inactive ?? false,
        }),
        next_cursor: null,
        has_more: false,
      }),
      {
        auth: 'read',
        query: TenantQuery,
        response: {
          200: t.Object({
            data: t.Array(RuleT),
            next_cursor: t.Null(),
            has_more: t.Boolean(),
          }),
        },
        detail: doc(
          'List the active rules, the built-in defaults included, highest priority first',
        ),
      },
    )
    .post(
      '/api/v1/categorize/rules',
      ({ body, actor, set }) => {
        set.status = 201
        return createRule(ctx, { states, tenantId: tenantFor(actor, body.tenant_id), body })
      },
      {
        auth: 'manage',
        idempotent: true,
        body: CreateRuleBody,
        response: { 201: RuleT },
        detail: doc('Add a rule (keyword or regex; a higher priority wins)'),
      },
    )
    .get(
      '/api/v1/categorize/rules/:id',
      ({ params, query, actor }) => getRule(ctx, tenantFor(actor, query.tenant_id), params.id),
      {
        auth: 'read',
        query: TenantQuery,
        response: { 200: RuleT },
        detail: doc("One rule by id, built-in ones included (404 for another tenant's)"),
      },
    )
    .put('/api/v1/categorize/rules/:id', changeRule({ replace: true }), {
      auth: 'manage',
      query: TenantQuery,
      body: t.Omit(CreateRuleBody, ['tenant_id']),
      response: { 200: RuleT },
      detail: doc('Replace a rule'),
    })
    .patch('/api/v1/categorize/rules/:id', changeRule({ replace: false }), {
      auth: 'manage',
      query: TenantQuery,
      body: PatchRuleBody,
      response: { 200: RuleT },
      detail: doc('Change some fields of a rule'),
    })
    .delete(
      '/api/v1/categorize/rules/:id',
      ({ params, query, actor, set }) => {
        deleteRule(ctx, { states, tenantId: tenantFor(actor, query.tenant_id), id: params.id })
        set.status = 204
      },
      { auth: 'manage', query: TenantQuery, detail: doc('Delete a rule') },
    )
    .put(
      '/api/v1/categorize/transactions/:id',
      ({ params, query, body, actor }) =>
        overrideCategory(ctx, states, {
          tenantId: tenantFor(actor, query.tenant_id),
          userId: actor.userId,
          transactionId: params.id,
          category: body.category,
        }),
      {
        auth: 'analyze',
        query: TenantQuery,
        body: OverrideBody,
        response: { 200: TransactionEvent },
        detail: doc(
          'Override the category of a transaction; later transactions of the same counterparty or description follow it',
        ),
      },
    )
}
