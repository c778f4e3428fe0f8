import type { ServiceContext } from '../kernel/context.ts'
import { tenantFor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import { moveTenantToInstance } from './instance-move.ts'
import { type Job, type Jobs, waitFor } from './jobs.ts'
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

/** What a request hands to its job: the work, and where to answer 202 when it takes longer. */
interface JobRequest<T> {
  set: { status?: number | string; headers: Record<string, string | number> }
  request: Request
  kind: Job['kind']
  tenantId: string
  work: () => Promise<T>
}

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
  const asJob = async <T>({ set, request, kind, tenantId, work }: JobRequest<T>) => {
    const r = await jobs.run(kind, tenantId, work, waitFor(request))
    if (r.done) return r.value
    set.status = 202
    set.headers.location = `/api/v1/tenants/${tenantId}/jobs/${r.job.id}`
    set.headers['retry-after'] = '1'
    return r.job
  }
  return app
    .put(
      '/api/v1/tenants/:tenant_id/upgrade',
      ({ params, actor, body, requestId, request, set }) =>
        asJob({
          set,
          request,
          kind: 'tier_move',
          tenantId: tenantFor(actor, assertTenantId(params.tenant_id, 'tenant_id')),
          work: () =>
            upgradeTenant({
              ctx,
              call: callOf(actor, requestId, request),
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
      ({ params, actor }) => jobs.get(tenantInPath(ctx, actor, params.tenant_id).id, params.job_id),
      {
        auth: 'admin',
        response: { 200: JobView },
        detail: secured('Follow a tier or instance move answered 202'),
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
