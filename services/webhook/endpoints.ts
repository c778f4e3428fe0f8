import { and, count, desc, eq, inArray, lt } from 'drizzle-orm'
import { webhookDeliveries, webhookEndpoints } from '../../schema/webhook/tables.ts'
import { assertEntitled, readEntitlements } from '../kernel/entitlements.ts'
import { invalidField, LimitExceeded, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { snakeFields } from '../kernel/snake.ts'
import type { WebhookDeps } from './deps.ts'
import {
  type CreateEndpointBody,
  type Endpoint,
  isWebhookEvent,
  payloadVersions,
  type UpdateEndpointBody,
  webhookEvents,
} from './model.ts'
import { generateSecret, secretProblem } from './signing.ts'
import { checkDestination, DestinationRefused } from './ssrf.ts'

export type EndpointRow = typeof webhookEndpoints.$inferSelect

/**
 * An endpoint as the API answers it (never its secrets), keys in the schema's order: Elysia sends
 * them in that order, and an idempotent replay sends the stored answer as returned here.
 */
export function endpointView(row: EndpointRow): Endpoint {
  return {
    ...snakeFields(row, ['id', 'tenantId', 'url']),
    events: JSON.parse(row.events) as string[],
    status: row.status as Endpoint['status'],
    ...snakeFields(row, [
      'version',
      'rateLimit',
      'description',
      'disabledReason',
      'createdAt',
      'updatedAt',
    ]),
  }
}

function checkEvents(events: readonly string[]): string[] {
  const unknown = events.filter((e) => !isWebhookEvent(e))
  if (unknown.length)
    throw invalidField(
      'events',
      `unknown event(s): ${unknown.join(', ')}; must be one of: ${webhookEvents.join(', ')}`,
    )
  return [...new Set(events)]
}

function checkVersion(version: number | undefined): number {
  const v = version ?? 1
  if (!(payloadVersions as readonly number[]).includes(v))
    throw invalidField('version', `must be one of ${payloadVersions.join(', ')}`)
  return v
}

export function checkSecret(secret: string): string {
  const problem = secretProblem(secret)
  if (problem) throw invalidField('secret', problem)
  return secret
}

async function checkUrl(deps: WebhookDeps, url: string): Promise<string> {
  try {
    await checkDestination(url.trim(), deps.config, {
      resolve: deps.resolve,
      unresolvable: 'allow',
    })
    return url.trim()
  } catch (err) {
    if (err instanceof DestinationRefused) throw invalidField('url', err.message)
    throw err
  }
}

/** How many endpoints a tenant has against its plan limit (null: unlimited or not known yet). */
export function endpointUsage(deps: WebhookDeps, tenantId: string) {
  const used =
    deps.db.orm
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.tenantId, tenantId))
      .get()?.n ?? 0
  const limit = readEntitlements(deps.registry, tenantId)?.limits.webhook_endpoints ?? null
  return { tenant_id: tenantId, webhook_endpoints: { used, limit } }
}

/**
 * The plan limit on endpoints: the shared check (suspension, billing's count) and our own count,
 * since billing learns about endpoints only later.
 */
function assertEndpointAllowed(deps: WebhookDeps, tenantId: string): void {
  assertEntitled(deps.registry, tenantId, { write: true, metric: 'webhook_endpoints', adding: 1 })
  const { used, limit } = endpointUsage(deps, tenantId).webhook_endpoints
  if (limit !== null && used + 1 > limit) throw new LimitExceeded('webhook_endpoints', limit, used)
}

/** Registers an endpoint; a generated secret is returned this once (`secret`), never again. */
export async function createEndpoint(
  deps: WebhookDeps,
  tenantId: string,
  body: CreateEndpointBody,
): Promise<Endpoint & { secret?: string }> {
  const events = checkEvents(body.events)
  const version = checkVersion(body.version)
  const secret = body.secret === undefined ? generateSecret() : checkSecret(body.secret)
  const url = await checkUrl(deps, body.url)
  const now = deps.clock.now().toISOString()
  const id = newId('whe')
  const row: EndpointRow = {
    id,
    tenantId,
    url,
    events: JSON.stringify(events),
    secret: deps.secrets.seal(secret, id),
    previousSecret: null,
    previousSecretExpiresAt: null,
    version,
    rateLimit: body.rate_limit ?? null,
    status: 'enabled',
    disabledReason: null,
    description: body.description ?? null,
    createdAt: now,
    updatedAt: now,
  }
  deps.db.write((orm) => {
    assertEndpointAllowed(deps, tenantId)
    orm.insert(webhookEndpoints).values(row).run()
  })
  return { ...endpointView(row), ...(body.secret === undefined ? { secret } : {}) }
}

/** `tenantId` null: the platform operator, who sees every tenant's endpoints. */
export function getEndpointRow(deps: WebhookDeps, tenantId: string | null, id: string) {
  const row = deps.db.orm
    .select()
    .from(webhookEndpoints)
    .where(
      tenantId === null
        ? eq(webhookEndpoints.id, id)
        : and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.tenantId, tenantId)),
    )
    .get()
  if (!row) throw new NotFound('webhook endpoint', id)
  return row
}

/** `tenantId` null: every tenant's endpoints (platform operator). */
export function listEndpoints(
  deps: WebhookDeps,
  tenantId: string | null,
  page: { limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = page.limit ?? 50
  const rows = deps.db.orm
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        tenantId === null ? undefined : eq(webhookEndpoints.tenantId, tenantId),
        page.cursor ? lt(webhookEndpoints.id, page.cursor) : undefined,
      ),
    )
    .orderBy(desc(webhookEndpoints.id))
    .limit(limit + 1)
    .all()
  const more = rows.length > limit
  const data = rows.slice(0, limit).map(endpointView)
  return { data, next_cursor: more ? data[data.length - 1]!.id : null, has_more: more }
}

export async function updateEndpoint(
  deps: WebhookDeps,
  tenantId: string | null,
  id: string,
  body: UpdateEndpointBody,
): Promise<Endpoint> {
  const current = getEndpointRow(deps, tenantId, id)
  const set: Partial<EndpointRow> = { updatedAt: deps.clock.now().toISOString() }
  if (body.url !== undefined) set.url = await checkUrl(deps, body.url)
  if (body.events !== undefined) set.events = JSON.stringify(checkEvents(body.events))
  if (body.version !== undefined) set.version = checkVersion(body.version)
  if (body.rate_limit !== undefined) set.rateLimit = body.rate_limit
  if (body.description !== undefined) set.description = body.description
  if (body.status !== undefined) {
    set.status = body.status
    set.disabledReason = body.status === 'disabled' ? 'disabled by a user' : null
  }
  deps.db.write((orm) =>
    orm.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, current.id)).run(),
  )
  deps.notify.endpointChanged(current.id)
  return endpointView(getEndpointRow(deps, tenantId, id))
}

/** Deletes the endpoint; its undelivered deliveries end dead and stay in the log. */
export function deleteEndpoint(deps: WebhookDeps, tenantId: string | null, id: string): void {
  const current = getEndpointRow(deps, tenantId, id)
  const now = deps.clock.now().toISOString()
  deps.db.write((orm) => {
    orm.delete(webhookEndpoints).where(eq(webhookEndpoints.id, current.id)).run()
    orm
      .update(webhookDeliveries)
      .set({ status: 'dead', lastError: 'endpoint deleted', updatedAt: now })
      .where(
        and(
          eq(webhookDeliveries.endpointId, current.id),
          inArray(webhookDeliveries.status, ['pending']),
        ),
      )
      .run()
  })
  deps.notify.endpointChanged(current.id)
}
