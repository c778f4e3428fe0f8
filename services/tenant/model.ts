import { t } from 'elysia'
import { listOf } from '../kernel/lists.ts'

/**
 * Plan ids are `free`, `pro`, `enterprise` (the SPEC's capitalised tier names are accepted too) or
 * the id of a plan the operator created in billing.
 */
export const PlanId = t.String({
  maxLength: 64,
  description: 'free | pro | enterprise (case-insensitive), or a plan id billing defines',
  examples: ['pro'],
})
/** Admin, Manager, Analyst or Viewer (case-insensitive). */
export const RoleName = t.String({
  maxLength: 20,
  description: 'Admin | Manager | Analyst | Viewer (case-insensitive)',
  examples: ['Analyst'],
})
const Features = t.Record(t.String(), t.Boolean())
const Settings = t.Record(t.String(), t.Unknown())

export const Tenant = t.Object(
  {
    id: t.String(),
    name: t.String(),
    plan: t.String(),
    isolation: t.String(),
    status: t.String(),
    features: Features,
    timezone: t.String(),
    instances: t.Optional(
      t.Record(t.String(), t.String(), {
        description:
          'the instance the tenant was moved to, per service that runs as several (mmp tenant move --to)',
      }),
    ),
    settings: Settings,
    database_path: t.Optional(t.Nullable(t.String())),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'Tenant' },
)

export const CreatedTenant = t.Composite([
  Tenant,
  t.Object({
    admin_user_id: t.String(),
    invite_token: t.Optional(t.String()),
    invite_url: t.Optional(
      t.String({ description: "The dashboard page that sets the Admin's password" }),
    ),
    invite_expires_at: t.Optional(t.String()),
  }),
])

export const CreateTenantBody = t.Object({
  id: t.Optional(t.String({ maxLength: 100 })),
  name: t.String({ minLength: 1, maxLength: 200 }),
  plan: t.Optional(PlanId),
  admin_email: t.String({ format: 'email', maxLength: 254 }),
  admin_password: t.Optional(t.String({ minLength: 8, maxLength: 1024 })),
  timezone: t.Optional(t.String({ maxLength: 64 })),
  database_path: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
  settings: t.Optional(Settings),
})

export const UpdateTenantBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  timezone: t.Optional(t.String({ maxLength: 64 })),
  settings: t.Optional(Settings),
})

export const UpgradeBody = t.Object({
  plan: PlanId,
  database_path: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
})

export const UpgradeResult = t.Composite([
  Tenant,
  t.Object({
    previous_plan: t.String(),
    moved_rows: t.Integer(),
  }),
])

export const TenantList = listOf(Tenant)

export const FeatureState = t.Object(
  {
    tenant_id: t.String(),
    plan: t.String(),
    features: Features,
    defaults: Features,
    overrides: Features,
    operator_overrides: t.Optional(
      t.Record(t.String(), t.Boolean(), {
        description: "The operator's switches: a layer the tenant cannot lift",
      }),
    ),
    tenant_overrides: t.Optional(
      t.Record(t.String(), t.Boolean(), {
        description: "The tenant's own switches, acting only inside the plan and the operator's",
      }),
    ),
    held_by: t.Optional(
      t.Record(
        t.String(),
        t.Union([t.Literal('plan'), t.Literal('operator'), t.Literal('tenant')]),
        {
          description: 'For each flag, the layer that decides its value',
        },
      ),
    ),
  },
  { additionalProperties: true },
)

export const InviteBody = t.Object({
  email: t.String({ format: 'email', maxLength: 254 }),
  role: RoleName,
  password: t.Optional(t.String({ minLength: 8, maxLength: 1024 })),
})

export const Invitation = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  email: t.String(),
  role: t.String(),
  status: t.String(),
  invite_token: t.Optional(t.String()),
  invite_url: t.Optional(t.String({ description: 'The dashboard page that sets the password' })),
  expires_at: t.Optional(t.String()),
})

export const UserList = listOf(
  t.Object(
    {
      id: t.String(),
      tenant_id: t.String(),
      email: t.String(),
      role: t.String(),
      status: t.String(),
    },
    { additionalProperties: true },
  ),
)

/** A long operator action followed as a job (services/tenant/jobs.ts). */
export const JobView = t.Object(
  {
    id: t.String(),
    kind: t.Union([t.Literal('tier_move'), t.Literal('instance_move'), t.Literal('backup')]),
    tenant_id: t.String(),
    status: t.Union([t.Literal('running'), t.Literal('succeeded'), t.Literal('failed')]),
    created_at: t.String({ format: 'date-time' }),
    updated_at: t.String({ format: 'date-time' }),
    finished_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    result: t.Union([t.Unknown(), t.Null()]),
    error: t.Union([
      t.Object({ status: t.Integer(), code: t.String(), detail: t.String() }),
      t.Null(),
    ]),
  },
  { title: 'Job' },
)

export const InstanceMoveBody = t.Object({
  service: t.String({ description: 'a service that runs as several instances' }),
  instance: t.String({ description: 'the instance URL, as discovery lists it' }),
})

export const InstanceMoveResult = t.Object(
  {
    tenant_id: t.String(),
    service: t.String(),
    from: t.String(),
    to: t.String(),
    moved: t.Boolean({ description: 'false: the tenant was there already' }),
    rows: t.Integer({ description: 'rows the new instance took over' }),
    replayed: t.Integer({ description: 'events published again for it' }),
  },
  { title: 'InstanceMove' },
)

export const BackupWritten = t.Object(
  {
    backup: t.String({ description: 'the folder name, e.g. mmp-backup-20300101T030000000Z' }),
    path: t.String({ description: 'where it is on the server, in the configured backup.dir' }),
    bytes: t.Integer({ description: 'bytes written' }),
    files: t.Integer(),
    databases: t.Integer(),
    started_at: t.String({
      format: 'date-time',
      description: 'every row committed before this time is in the backup',
    }),
    finished_at: t.String({ format: 'date-time' }),
    duration_ms: t.Integer(),
    pruned: t.Integer({ description: 'older backups deleted past backup.keep' }),
    warnings: t.Array(t.String()),
  },
  { title: 'Backup' },
)

export type BackupWritten = typeof BackupWritten.static
export type CreateTenantInput = typeof CreateTenantBody.static
export type UpdateTenantInput = typeof UpdateTenantBody.static
export type TenantView = typeof Tenant.static
export type InstanceMove = typeof InstanceMoveResult.static
