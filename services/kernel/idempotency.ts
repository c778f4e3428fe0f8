import { idempotentRequests } from '../../schema/kernel.ts'
import { selectList, sqlNames } from './columns.ts'
import type { ServiceContext } from './context.ts'
import type { Db } from './db.ts'
import { AppError, IdempotencyInProgress, ValidationError } from './errors.ts'
import { type SpooledBody, spoolBody } from './idempotency-body.ts'

/** How long an answered key is kept and replayed (Stripe's 24 h). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000
/**
 * How long a first request may run before its key is taken as abandoned (its process died) and a
 * retry runs it again: longer than any route's budget, including a statement import's.
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60_000
/** Set on an answer that is a stored one replayed. */
export const REPLAYED_HEADER = 'Idempotent-Replayed'
export const MAX_KEY_LENGTH = 255

/**
 * The `Idempotency-Key` header's value, or null when none was sent; longer than 255 characters is
 * a 422 naming the header.
 *
 * @example
 * idempotencyKeyOf(request.headers.get('idempotency-key')) // 'order-42' | null
 */
export function idempotencyKeyOf(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null
  if (value.length > MAX_KEY_LENGTH)
    throw new ValidationError(`Idempotency-Key: must be at most ${MAX_KEY_LENGTH} characters`, [
      { field: 'Idempotency-Key', message: `must be at most ${MAX_KEY_LENGTH} characters` },
    ])
  return value
}

/** The error for a key sent again with another request: 409 IDEMPOTENCY_KEY_REUSED. */
export const keyReused = () =>
  new AppError(
    'IDEMPOTENCY_KEY_REUSED',
    'this Idempotency-Key was used with a different request; send a new key for a new request',
  )

/** JSON with sorted keys and no undefined members, so the same request always hashes the same. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`
  if (v && typeof v === 'object')
    return `{${Object.keys(v as object)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(v) ?? 'null'
}

/**
 * SHA-256 of a request's meaningful parts (hex).
 *
 * @example
 * requestHash({ amount: 10, phone: '254700000000' }) === requestHash({ phone: '254700000000', amount: 10 })
 */
export const requestHash = (v: unknown): string =>
  new Bun.CryptoHasher('sha256').update(stableJson(v)).digest('hex')

const r = sqlNames(idempotentRequests)
const ROW_KEYS = [
  'requestHash',
  'status',
  'contentType',
  'body',
  'location',
  'createdAt',
  'lockedUntil',
] as const
type Row = Pick<typeof idempotentRequests.$inferSelect, (typeof ROW_KEYS)[number]>
const SCOPE = `${r.tenantId} = ? AND ${r.route} = ? AND ${r.key} = ?`
const READ = `SELECT ${selectList(idempotentRequests, ROW_KEYS)} FROM ${r.$} WHERE ${SCOPE}`
const FORGET_OLD = `DELETE FROM ${r.$} WHERE ${r.createdAt} < ?`
const FORGET = `DELETE FROM ${r.$} WHERE ${SCOPE}`
const CLAIM = `INSERT OR IGNORE INTO ${r.$} (${r.tenantId}, ${r.route}, ${r.key}, ${r.requestHash}, ${r.createdAt}, ${r.lockedUntil}) VALUES (?, ?, ?, ?, ?, ?)`
const FREE = `DELETE FROM ${r.$} WHERE ${SCOPE} AND ${r.lockedUntil} = ?`
const ANSWER = `UPDATE ${r.$} SET ${r.status} = ?, ${r.contentType} = ?, ${r.body} = ?, ${r.location} = ? WHERE ${SCOPE} AND ${r.lockedUntil} = ?`

interface Claim {
  db: Db
  /** Top-level answer fields that are secrets shown once: never stored, so never replayed. */
  shownOnce: readonly string[]
  /** Tells this claim from a later one that took over after the lease passed. */
  lockedUntil: number
  tenantId: string
  route: string
  key: string
  /** Removes the spooled copy of a streamed body. */
  discard?: (() => void) | undefined
}

/** What a route's request is, for the key's scope and hash. */
export interface IdempotentRequest {
  request: Request
  /** The caller's tenant: keys are scoped per tenant and route. */
  tenantId: string
  /** Method and route pattern, e.g. `POST /api/v1/webhooks/deliveries/:id/replay`. */
  route: string
  params?: unknown
  query?: unknown
  /** The parsed body; undefined for a route that reads its body as a stream (uploads). */
  body?: unknown
  /**
   * Top-level fields of the answer that hold a secret shown once (an API key, a signing secret,
   * an invitation token or a link carrying it): the stored answer leaves them out, so no secret
   * sits in clear in the data dir or a backup, and a replay says it was shown once.
   */
  shownOnce?: readonly string[]
}

/** What a replay carries where a secret was left out. */
export const shownOnceNotice = (fields: readonly string[]) =>
  `${fields.join(', ')} ${fields.length === 1 ? 'was' : 'were'} shown once, in the first answer to this request, and ${fields.length === 1 ? 'is' : 'are'} not kept: revoke or rotate and create a new one if it was lost`

/**
 * The body to keep for a replay: a JSON object without its shown-once fields, plus `shown_once`
 * saying which were left out. A body that is not such an object (a problem answer) has none.
 */
export function withoutSecrets(body: string, fields: readonly string[]): string {
  if (fields.length === 0) return body
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return body
  const kept: Record<string, unknown> = {}
  const left: string[] = []
  for (const [k, v] of Object.entries(parsed)) {
    if (fields.includes(k)) left.push(k)
    else kept[k] = v
  }
  if (left.length === 0) return body
  return JSON.stringify({ ...kept, shown_once: shownOnceNotice(left) })
}

/**
 * Stripe's `Idempotency-Key` semantics for every create (one implementation, every service): the
 * same key with the same request replays the stored status and body with `Idempotent-Replayed:
 * true`; another request → 409 IDEMPOTENCY_KEY_REUSED; the first still running → 409
 * IDEMPOTENCY_IN_PROGRESS with Retry-After. Keys are scoped per tenant and route, kept 24 h, in the
 * service's own platform database (`idempotent_requests`, schema/kernel.ts). A 5xx answer is not
 * kept: the key is freed so a retry runs again. Requests that fail validation or auth never reach
 * it (Stripe does the same).
 *
 * createServiceApp wires it as the `idempotent: true` route option.
 *
 * @example
 * const idem = createIdempotency(ctx)
 * const replay = await idem.begin({ request, tenantId, route: 'POST /api/v1/webhooks', body })
 * if (replay) return replay
 * // ... the handler runs, then:
 * await idem.settle(request, response)
 */
export function createIdempotency(ctx: ServiceContext<unknown>) {
  const claims = new WeakMap<Request, Claim>()
  let purgedAt = 0

  const purge = (db: Db, now: number) => {
    if (now - purgedAt < 60_000) return
    purgedAt = now
    db.sqlite.query(FORGET_OLD).run(now - IDEMPOTENCY_RETENTION_MS)
  }

  const replay = (row: Row, request: Request): Response =>
    new Response(row.body ?? '', {
      status: row.status ?? 200,
      headers: {
        'content-type': row.contentType ?? 'application/json',
        ...(row.location ? { location: row.location } : {}),
        [REPLAYED_HEADER]: 'true',
        ...(request.headers.get('x-request-id')
          ? { 'x-request-id': request.headers.get('x-request-id')! }
          : {}),
      },
    })

  /** Claims a key for a request, or answers for it with a replay or a thrown 409. */
  const claim = (
    r: IdempotentRequest,
    key: string,
    hash: string,
    spooled: SpooledBody | null,
  ): Response | Request | undefined => {
    const db = ctx.registry.platform(ctx.name)
    const now = ctx.clock.nowMs()
    purge(db, now)
    const scope = [r.tenantId, r.route, key] as const
    // bun:sqlite is synchronous: from the read to the claim nothing else runs in this process,
    // and INSERT OR IGNORE settles a race with another worker on the same file.
    const row = db.sqlite.query<Row, [string, string, string]>(READ).get(...scope)
    if (row && row.createdAt >= now - IDEMPOTENCY_RETENTION_MS) {
      if (row.requestHash !== hash) throw keyReused()
      if (row.status !== null) {
        spooled?.discard()
        return replay(row, r.request)
      }
      if (row.lockedUntil > now)
        throw new IdempotencyInProgress(Math.min(5, (row.lockedUntil - now) / 1000))
    }
    if (row) db.sqlite.query(FORGET).run(...scope)
    const claimed = db.sqlite.query(CLAIM).run(...scope, hash, now, now + IDEMPOTENCY_LEASE_MS)
    if (claimed.changes !== 1) throw new IdempotencyInProgress(1)
    const request = spooled ? spooled.request : r.request
    claims.set(request, {
      db,
      shownOnce: r.shownOnce ?? [],
      lockedUntil: now + IDEMPOTENCY_LEASE_MS,
      tenantId: r.tenantId,
      route: r.route,
      key,
      discard: spooled?.discard,
    })
    return spooled ? request : undefined
  }

  return {
    /**
     * Claims the request's key, or answers for it: a Response to replay, a thrown 409, undefined
     * when the route should run (no key, or the key is now this request's), or, for a streamed
     * body, the Request the route should run with instead (its body read back from the spool).
     */
    async begin(r: IdempotentRequest): Promise<Response | Request | undefined> {
      const key = idempotencyKeyOf(r.request.headers.get('idempotency-key'))
      if (key === null) return undefined
      // A streamed body (an upload) is hashed as it arrives and spooled to a file the route then
      // reads, so the body is never held whole in memory to be hashed.
      const spooled =
        r.body === undefined && r.request.body
          ? await spoolBody(ctx.registry.dataDir, r.request)
          : null
      const hash = requestHash({
        params: r.params,
        query: r.query,
        body: spooled ? spooled.hash : r.body,
      })
      try {
        return claim(r, key, hash, spooled)
      } catch (err) {
        spooled?.discard()
        throw err
      }
    },

    /**
     * Stores the answer of a request that claimed a key (a no-op for any other request) and hands
     * it back unchanged; a 5xx frees the key instead.
     */
    async settle(request: Request, response: Response): Promise<Response> {
      const claim = claims.get(request)
      if (!claim) return response
      claims.delete(request)
      claim.discard?.()
      const scope = [claim.tenantId, claim.route, claim.key, claim.lockedUntil] as const
      if (response.status >= 500) {
        claim.db.sqlite.query(FREE).run(...scope)
        return response
      }
      const body = withoutSecrets(await response.clone().text(), claim.shownOnce)
      claim.db.sqlite
        .query(ANSWER)
        .run(
          response.status,
          response.headers.get('content-type') ?? 'application/json',
          body,
          response.headers.get('location'),
          ...scope,
        )
      return response
    },

    /** Whether a request holds a claimed key that is not settled yet. */
    claimed: (request: Request) => claims.has(request),
  }
}
