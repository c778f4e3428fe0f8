import type { ServiceContext } from '../kernel/context.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { assertTenantId, PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { moveTenantToInstance } from './instance-move.ts'
import { answerAsJob, type JobRequest, type Jobs } from './jobs.ts'
import {
  InstanceMoveBody,
  InstanceMoveResult,
  JobView,
  UpgradeBody,
  UpgradeResult,
} from './model.ts'
import { callOf, secured } from './routes-common.ts'
import { tenantInPath } from './store.ts'
import { upgradeTenant } from './upgrade.ts'

/** The long actions, answered 202 with a job when they take longer: plan changes, instance moves. */
export function moveRoutes({
  app,
  ctx,
  jobs,
}: {
  app: ServiceApp
  ctx: ServiceContext
  jobs: Jobs
}) {
  const asJob = <T>(req: JobRequest<T>) => answerAsJob(jobs, req)
  return app
    .put(
      '/api/v1/tenants/:tenant_id/upgrade',
      ({ params, actor, body, requestId, request, set }) =>
        asJob({
          set,
          request,
          kind: 'tier_move',
          tenantId: tenantFor(actor, assertTenantId(params.tenant_id, 'tenant_id')),
          work: (turn) =>
            upgradeTenant({
              ctx,
              call: callOf(actor, requestId, request, turn),
              actor,
              id: params.tenant_id,
              input: body,
            }),
        }),
      {
        auth: 'admin',
        body: UpgradeBody,
        response: { 200: UpgradeResult, 202: JobView },
        detail: secured(
          'Change the plan: isolation tier, feature defaults, data moved (202 with a job when it takes longer; Prefer: respond-async asks for the job at once)',
        ),
      },
    )
    .get(
      '/api/v1/tenants/:tenant_id/jobs/:job_id',
      ({ params, actor }) => jobs.get(jobTenant(ctx, actor, params.tenant_id), params.job_id),
      {
        auth: 'admin',
        response: { 200: JobView },
        detail: secured(
          'Follow a tier move, an instance move or a backup (tenant `platform`) answered 202',
        ),
      },
    )
    .post(
      '/api/v1/tenants/:tenant_id/instances',
      ({ params, actor, body, request, set }) =>
        asJob({
          set,
          request,
          kind: 'instance_move',
          tenantId: tenantFor(actor, assertTenantId(params.tenant_id, 'tenant_id')),
          work: () => moveTenantToInstance(ctx, actor, params.tenant_id, body),
        }),
      {
        auth: 'operator',
        body: InstanceMoveBody,
        response: {
          200: InstanceMoveResult,
          202: JobView,
        },
        detail: secured(
          'Move a tenant to another instance of a partitioned service, reads working meanwhile (operator)',
        ),
      },
    )
}

/** Whose jobs a path names: a tenant's, or the platform's own (backups) for the operator. */
function jobTenant(ctx: ServiceContext, actor: Actor, named: string): string {
  const tenantId = tenantFor(actor, assertTenantId(named, 'tenant_id'))
  return tenantId === PLATFORM_TENANT ? tenantId : tenantInPath(ctx, actor, tenantId).id
}
