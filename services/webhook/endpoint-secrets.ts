import { and, eq, notLike, or } from 'drizzle-orm'
import { webhookEndpoints } from '../../schema/webhook/tables.ts'
import type { WebhookDeps } from './deps.ts'
import { checkSecret, type EndpointRow, endpointView, getEndpointRow } from './endpoints.ts'
import { isSealed, type SecretBox } from './secret-box.ts'
import { generateSecret, secretKey } from './signing.ts'

/** An endpoint's signing secrets: rotation, the keys an attempt signs with, sealing at rest. */

/**
 * Replaces the signing secret. The old one keeps signing alongside (a second `v1,` signature)
 * for the overlap window, so receivers can switch without losing a delivery (Svix behaviour).
 */
export function rotateSecret(
  deps: WebhookDeps,
  tenantId: string | null,
  id: string,
  secret: string | undefined,
) {
  const current = getEndpointRow(deps, tenantId, id)
  const next = secret === undefined ? generateSecret() : checkSecret(secret)
  const now = deps.clock.nowMs()
  const expires = new Date(now + deps.config.rotationOverlapMs).toISOString()
  deps.db.write((orm) =>
    orm
      .update(webhookEndpoints)
      .set({
        secret: deps.secrets.seal(next, current.id),
        previousSecret: current.secret,
        previousSecretExpiresAt: expires,
        updatedAt: new Date(now).toISOString(),
      })
      .where(eq(webhookEndpoints.id, current.id))
      .run(),
  )
  deps.notify.endpointChanged(current.id)
  return {
    ...endpointView(getEndpointRow(deps, tenantId, id)),
    ...(secret === undefined ? { secret: next } : {}),
    previous_secret_expires_at: expires,
  }
}

/** Opened keys per loaded row: the dispatcher keeps a row until its endpoint changes. */
const opened = new WeakMap<EndpointRow, { current: Uint8Array; previous: Uint8Array | null }>()

/**
 * The keys an attempt signs with now: the current secret, and the previous one while valid,
 * opened from their sealed form here so nothing else handles a clear secret. Throws when the
 * install's key cannot open them (the attempt then fails with that reason).
 */
export function signingKeys(row: EndpointRow, nowMs: number, box: SecretBox): Uint8Array[] {
  let keys = opened.get(row)
  if (!keys) {
    const previous = row.previousSecret ? box.open(row.previousSecret, row.id) : null
    keys = {
      current: secretKey(box.open(row.secret, row.id))!,
      previous: previous ? secretKey(previous) : null,
    }
    opened.set(row, keys)
  }
  const expires = row.previousSecretExpiresAt ? Date.parse(row.previousSecretExpiresAt) : 0
  return keys.previous && expires > nowMs ? [keys.current, keys.previous] : [keys.current]
}

/**
 * Seals secrets stored in clear by versions before encryption at rest. Runs at start; a row is
 * rewritten only while still clear, so two processes starting together do not seal twice.
 */
export function sealClearSecrets(deps: WebhookDeps): number {
  const clear = deps.db.orm
    .select({
      id: webhookEndpoints.id,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
    })
    .from(webhookEndpoints)
    .where(
      or(
        notLike(webhookEndpoints.secret, 'enc:%'),
        notLike(webhookEndpoints.previousSecret, 'enc:%'),
      ),
    )
    .all()
  const seal = (v: string | null, id: string) =>
    v === null || isSealed(v) ? v : deps.secrets.seal(v, id)
  const t = webhookEndpoints
  deps.db.write((orm) => {
    for (const r of clear)
      orm
        .update(t)
        .set({ secret: seal(r.secret, r.id)!, previousSecret: seal(r.previousSecret, r.id) })
        .where(and(eq(t.id, r.id), eq(t.secret, r.secret)))
        .run()
  })
  return clear.length
}
