import { rmSync } from 'node:fs'
import { Elysia, t } from 'elysia'
import {
  clearHandoffLeftovers,
  packTenant,
  releaseTenant,
  unpackTenant,
} from '../../tenants/handoff.ts'
import type { ServiceContext } from './context.ts'
import { AppError } from './errors.ts'
import { faultPoint } from './faults.ts'
import { republish } from './republish.ts'
import { platformCaller } from './request-guards.ts'
import { assertCan } from './roles.ts'
import { assertTenantId } from './tenant-id.ts'
import { bearerToken } from './tokens.ts'

/**
 * The routes one part calls on another while a tenant moves between instances of a partitioned
 * service (`mmp tenant move --to`, tenants/handoff.ts), and the replay of events: a tenant's after
 * its move, or some topics' for a consumer whose broker session was lost (daemon/sessions.ts,
 * asked as the platform). The tenant service calls them with the operator's token; the gateway does not route
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
  // What a move killed mid-way left in run/handoff goes as the service starts.
  if (ctx.registry?.dataDir) clearHandoffLeftovers(ctx.registry)
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
        // Streamed from disk, so a large tenant is never held whole in memory; the file goes
        // once it was read to the end or the caller went away.
        const file = Bun.file(packed.path)
        return new Response(streamThenRemove(packed.path), {
          headers: {
            'content-type': 'application/vnd.sqlite3',
            'content-length': String(file.size),
            'x-mmp-rows': String(packed.rows),
          },
        })
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
        const file = await ctx.client.call<ReadableStream<Uint8Array> | null>(
          ctx.name,
          HANDOFF_PATHS.pack,
          {
            method: 'POST',
            instance: body.from,
            body: { tenant: tenantId },
            token: actor.token,
            from: request,
            responseType: 'stream',
          },
        )
        // 204: the tenant has no rows there.
        const rows = file
          ? await unpackTenant(ctx.registry, { service: ctx.name, tenantId, file })
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
        // Also as the platform: the tenant service finishing a move cut short, at its start.
        if (!platformCaller(ctx, request)) await operator(request)
        partitioned()
        const tenantId = assertTenantId(body.tenant, 'tenant')
        const erase = body.to !== undefined
        // Not this instance's tenant any more (before erasing, so no event lands meanwhile).
        if (body.to !== undefined) placeAt(tenantId, body.to)
        const rows = await releaseTenant(ctx.registry, { service: ctx.name, tenantId, erase })
        return { tenant: tenantId, rows }
      },
      { body: t.Object({ tenant: t.String(), to: t.Optional(t.String()) }), ...hidden },
    )
    .post(
      HANDOFF_PATHS.replay,
      async ({ request, body }) => {
        if (!platformCaller(ctx, request)) await operator(request)
        // Publishing now would connect the broker session before this process's consumers
        // subscribed (bus.ts `deferred`); the caller asks again. A standby worker publishes on a
        // connection of its own (bus.ts lazyBus), so whichever worker is asked can answer.
        if (ctx.relay.publishing?.() === false && !ctx.bus.publishesAside?.())
          throw new AppError('SERVICE_UNAVAILABLE', `${ctx.name} does not publish events yet`)
        const tenant = body.tenant === undefined ? undefined : assertTenantId(body.tenant, 'tenant')
        if (Number.isNaN(Date.parse(body.since)))
          throw new AppError('VALIDATION_FAILED', 'since must be an ISO date-time')
        const republished = await republish(ctx, { since: body.since, tenant, topics: body.topics })
        return { tenant: tenant ?? null, republished }
      },
      {
        body: t.Object({
          tenant: t.Optional(t.String()),
          since: t.String(),
          topics: t.Optional(t.Array(t.String(), { maxItems: 64 })),
        }),
        ...hidden,
      },
    )
}

/** A file's bytes as a stream, the file removed once they were all read or the reader left. */
function streamThenRemove(path: string): ReadableStream<Uint8Array> {
  const reader = Bun.file(path).stream().getReader()
  const remove = () => rmSync(path, { force: true })
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          remove()
        } else controller.enqueue(value)
      } catch (err) {
        remove()
        controller.error(err)
      }
    },
    async cancel() {
      await reader.cancel().catch(() => {})
      remove()
    },
  })
}
