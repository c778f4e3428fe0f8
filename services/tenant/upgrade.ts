import { and, eq } from 'drizzle-orm'
import type {
  PlanTerms,
  SubscriptionChangedEvent,
  TopicEvent,
  topics,
} from '../../schema/events.ts'
import { isPlanId } from '../../schema/plans.ts'
import { inbox, tenants } from '../../schema/tenant/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { Forbidden } from '../kernel/errors.ts'
import { handleOnce } from '../kernel/events.ts'
import { perKeyQueue } from '../kernel/per-key-queue.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { applyPlan, placementForChange, resolvePlan } from './plan.ts'
import { underPlanLease } from './plan-lease.ts'
import { findTenant, type PlanChoice, type TenantRow, viewOf } from './profile.ts'
import { assertWritable, tenantDb, tenantInPath } from './store.ts'
import type { CallInfo } from './users.ts'

/**
 * What billing reports of a plan change, on its door's answer and on `subscriptions.changed`
 * alike: the plan, its terms and its revision (schema/events.ts).
 */
export type ReportedPlan = Pick<SubscriptionChangedEvent, 'plan' | 'plan_terms' | 'plan_revision'>

/**
 * Plan changes of one tenant are applied one at a time: the door waits for billing's answer while
 * the event of the same change may already be arriving (in another worker, with `--workers`), and
 * the event must then find the plan applied instead of moving the data beside the door's move.
 * In this process a queue per tenant; across the workers of a data dir, the tenant's plan lease.
 */
const queues = new WeakMap<ServiceContext, ReturnType<typeof perKeyQueue>>()

/** Runs `fn` when no other plan change (or instance move) of the tenant is under way. */
export function oneAtATime<T>(ctx: ServiceContext, tenantId: string, fn: () => Promise<T> | T) {
  let perTenant = queues.get(ctx)
  if (!perTenant) {
    perTenant = perKeyQueue()
    queues.set(ctx, perTenant)
  }
  return perTenant(tenantId, () => underPlanLease(ctx, tenantId, fn))
}

/** The plan billing reported as the tenant stores it, or null for a custom plan without terms. */
function choiceOf(plan: string, terms: PlanTerms | null | undefined): PlanChoice | null {
  if (isPlanId(plan)) return { plan, planTerms: null }
  return terms ? { plan, planTerms: JSON.stringify(terms) } : null
}

/**
 * `PUT /tenants/{id}/upgrade`: a tenant Admin (or the operator, who alone may choose an Enterprise
 * `database_path`) changes the plan. Billing owns the plan, so the change goes through its door
 * (`POST /billing/subscriptions/upgrade`, with the caller's token); its answer is applied here at
 * once (the data moves before this answers), and the `subscriptions.changed` event of the same
 * change then finds it applied. Everything this service can refuse is checked before billing is
 * asked, so a refusal never leaves billing on a plan the tenant is not on.
 */
export async function upgradeTenant({
  ctx,
  call,
  actor,
  id,
  input,
}: {
  ctx: ServiceContext
  call: CallInfo
  actor: Actor
  id: string
  input: { plan: string; database_path?: string | undefined }
}) {
  const first = tenantInPath(ctx, actor, id)
  assertWritable(actor, first)
  if (input.database_path !== undefined && !isOperator(actor)) {
    throw new Forbidden('only the platform operator chooses a database_path')
  }
  const wanted = await resolvePlan(ctx, call, input.plan)
  return oneAtATime(ctx, first.id, async () => {
    placementForChange(ctx, tenantInPath(ctx, actor, id), wanted, input.database_path)
    const answer = await ctx.client.call<ReportedPlan>(
      'billing',
      '/api/v1/billing/subscriptions/upgrade',
      {
        method: 'POST',
        body: { tenant_id: first.id, plan: wanted.plan },
        token: call.token,
        requestId: call.requestId,
        deadline: call.deadline,
      },
    )
    // Read again: the row may have changed while billing was asked.
    const row = tenantInPath(ctx, actor, id)
    const revision = answer.plan_revision ?? row.planRevision
    const choice = choiceOf(answer.plan, answer.plan_terms) ?? wanted
    if (revision < row.planRevision) {
      // A later plan change already reached this tenant: it stands.
      return { ...viewOf(row), previous_plan: row.plan, moved_rows: 0 }
    }
    return applyPlan({ ctx, row, choice, databasePath: input.database_path, revision })
  })
}

/**
 * `mobilemoney.subscriptions.changed` (DESIGN §10: the tier follows the subscription): applies
 * the plan billing reports, custom plans included (from `plan_terms`), when its `plan_revision`
 * is above the last one applied. A repeat, or an event a later change superseded (replayed, or
 * overtaken by the door's answer), changes nothing; a plan the tenant is already on only records
 * the revision. Billing's single outbox publishes in commit order, but the door's answer and a
 * replay are other ways for an older fact to arrive after a newer one, hence the revision.
 */
export function applySubscriptionChange(
  ctx: ServiceContext,
  event: TopicEvent<typeof topics.subscriptionsChanged>,
): Promise<void> {
  return oneAtATime(ctx, event.tenant_id, async () => {
    const db = tenantDb(ctx)
    const seen = db.orm
      .select({ eventId: inbox.eventId })
      .from(inbox)
      .where(and(eq(inbox.consumer, 'tenant'), eq(inbox.eventId, event.id)))
      .get()
    const change = seen ? null : changeOf(ctx, event)
    // The data moves before the event is recorded as handled (a move yields to the event loop, so
    // it cannot run inside the inbox transaction): after a crash meanwhile the event comes again,
    // and the revision then says whether the move finished.
    if (change?.choice) {
      const { row, choice, revision } = change
      await applyPlan({ ctx, row, choice, revision })
    }
    handleOnce(db, 'tenant', event.id, () => {
      if (!change || change.choice) return
      const row = findTenant(db, event.tenant_id)
      if (row && change.revision > row.planRevision) {
        db.orm
          .update(tenants)
          .set({ planRevision: change.revision })
          .where(eq(tenants.id, row.id))
          .run()
      }
    })
  })
}

/**
 * What a `subscriptions.changed` asks of a tenant: nothing (stale, unknown tenant, a custom plan
 * without terms), a new revision of the plan it is on, or a plan to apply.
 */
function changeOf(
  ctx: ServiceContext,
  event: TopicEvent<typeof topics.subscriptionsChanged>,
): { row: TenantRow; revision: number; choice: PlanChoice | null } | null {
  const row = findTenant(tenantDb(ctx), event.tenant_id)
  if (!row) return null
  const { plan, plan_terms, plan_revision } = event.data
  // An event from before revisions existed counts only until the first revisioned one.
  const stale =
    plan_revision === undefined ? row.planRevision > 0 : plan_revision <= row.planRevision
  if (stale) return null
  const revision = plan_revision ?? 0
  const choice = choiceOf(plan, plan_terms)
  if (!choice) {
    ctx.log.warn('subscription names a custom plan without its terms; not applied', {
      tenant_id: row.id,
      plan,
      event_id: event.id,
    })
    return null
  }
  return { row, revision, choice: row.plan === choice.plan ? null : choice }
}
