import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia, t } from 'elysia'
import { packTenant, releaseTenant, unpackTenant } from '../../tenants/handoff.ts'
import { hasOutbox } from '../../tenants/move-tables.ts'
import type { ServiceContext } from './context.ts'
import { AppError } from './errors.ts'
import { faultPoint } from './faults.ts'
import { assertCan } from './roles.ts'
import { assertTenantId } from './tenant-id.ts'
import { bearerToken } from './tokens.ts'

/**
 * The routes one part calls on another while a tenant moves between instances of a partitioned
 * service (`mmp tenant move --to`, tenants/handoff.ts), and the replay of a tenant's events after
 * it. The tenant service calls them with the operator's token; the gateway does not route
 * `/internal/` and the public document does not list them. They verify the operator here rather
 * than through the `auth` macro, whose instance check (a 421 for a tenant, or for the platform,
 * another instance owns) would refuse them: the tenant is on its way between instances.
 */
export const HANDOFF_PATHS = {
  pack: '/internal/handoff/pack',
  pull: '/internal/handoff/pull',
  release: '/internal/handoff/release',
  replay: '/internal/events/replay',
} as const

const hidden = { detail: { hide: true } }

export function handoffRoutes(ctx: ServiceContext<unknown>) {
  const operator = async (request: Request) => {
    const actor = await ctx.tokens.verify(bearerToken(request.headers.get('authorization')))
    assertCan(actor, 'operator')
    return actor
  }
  /** Writes this instance's copy of the tenant's profile to say which instance holds it now. */
  const placeAt = (tenantId: string, instance: string) => {
    const profile = ctx.registry.placement(tenantId)
    ctx.registry.setPlacement(tenantId, {
      ...profile,
      instances: { ...(profile.instances ?? {}), [ctx.name]: instance },
    })
  }
  const partitioned = () => {
    if (!ctx.ownership || ctx.ownership.instances.length < 2)
      throw new AppError(
        'CONFLICT',
        `${ctx.name} runs as one instance; there is nowhere to move to`,
      )
    return ctx.ownership
  }

  return new Elysia({ name: `mmp-handoff-${ctx.name}` })
    .post(
      HANDOFF_PATHS.pack,
      async ({ request, body }) => {
        await operator(request)
        partitioned()
        const tenantId = assertTenantId(body.tenant, 'tenant')
        const packed = await packTenant(ctx.registry, { service: ctx.name, tenantId })
        if (!packed) return new Response(null, { status: 204 })
        // Fenced and packed, nothing sent yet: the instance dies with the tenant fenced.
        faultPoint('handoff.after_pack')
        try {
          const bytes = await Bun.file(packed.path).arrayBuffer()
          return new Response(bytes, {
            headers: {
              'content-type': 'application/vnd.sqlite3',
              'x-mmp-rows': String(packed.rows),
            },
          })
        } finally {
          rmSync(packed.path, { force: true })
        }
      },
      { body: t.Object({ tenant: t.String() }), ...hidden },
    )
    .post(
      HANDOFF_PATHS.pull,
      async ({ request, body }) => {
        const actor = await operator(request)
        const ownership = partitioned()
        const tenantId = assertTenantId(body.tenant, 'tenant')
        ctx.registry.assertExists(tenantId)
        const file = await ctx.client.call<ArrayBuffer | undefined>(ctx.name, HANDOFF_PATHS.pack, {
          method: 'POST',
          instance: body.from,
          body: { tenant: tenantId },
          token: actor.token,
          from: request,
          responseType: 'arrayBuffer',
        })
        const rows =
          file && file.byteLength > 0
            ? await unpackTenant(ctx.registry, {
                service: ctx.name,
                tenantId,
                file: new Uint8Array(file),
              })
            : 0
        // Owned here from now on, before the tenant's new instance reaches this part as an event.
        placeAt(tenantId, ownership.self)
        return { tenant: tenantId, rows }
      },
      { body: t.Object({ tenant: t.String(), from: t.String() }), ...hidden },
    )
    .post(
      HANDOFF_PATHS.release,
      async ({ request, body }) => {
        await operator(request)
        partitioned()
        const tenantId = assertTenantId(body.tenant, 'tenant')
        const erase = body.to !== undefined
        // Not this instance's tenant any more (before erasing, so no event lands meanwhile).
        if (body.to !== undefined) placeAt(tenantId, body.to)
        const rows = releaseTenant(ctx.registry, { service: ctx.name, tenantId, erase })
        return { tenant: tenantId, rows }
      },
      { body: t.Object({ tenant: t.String(), to: t.Optional(t.String()) }), ...hidden },
    )
    .post(
      HANDOFF_PATHS.replay,
      async ({ request, body }) => {
        await operator(request)
        const tenantId = assertTenantId(body.tenant, 'tenant')
        return { tenant: tenantId, republished: await republish(ctx, tenantId, body.since) }
      },
      { body: t.Object({ tenant: t.String(), since: t.String() }), ...hidden },
    )
}

/**
 * Publishes again the events this part wrote about a tenant since a time, from its outboxes (the
 * tenant's file and the platform file), in order. Consumers drop the ones they applied already.
 */
async function republish(
  ctx: ServiceContext<unknown>,
  tenantId: string,
  since: string,
): Promise<number> {
  const dbs = []
  if (ctx.registry.hasProfile(tenantId) && existsSync(ctx.registry.pathOf(ctx.name, tenantId)))
    dbs.push(ctx.registry.tenant(ctx.name, tenantId))
  if (existsSync(join(ctx.registry.dataDir, 'platform', `${ctx.name}.db`)))
    dbs.push(ctx.registry.platform(ctx.name))
  let n = 0
  for (const db of dbs) {
    if (!hasOutbox(db.sqlite)) continue
    const rows = db.sqlite
      .query<{ topic: string; payload: string }, [string, string]>(
        'SELECT topic, payload FROM outbox WHERE tenant_id = ? AND created_at >= ? ORDER BY seq',
      )
      .all(tenantId, since)
    for (const row of rows) {
      await ctx.bus.publish(row.topic, JSON.parse(row.payload))
      n++
    }
  }
  return n
}
