import type { Db } from '../kernel/db.ts'
import { AppError, IdempotencyInProgress } from '../kernel/errors.ts'
import { faultPoint } from '../kernel/faults.ts'
import { newId } from '../kernel/ids.ts'
import { ProviderError } from './daraja.ts'
import { type Refusal, refusalOf } from './daraja-transport.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import {
  claimKey,
  decideKey,
  markReplayed,
  readKey,
  releaseKey,
  storeAnswer,
} from './idempotency.ts'
import { assertPhoneFree, phoneBusy } from './phone-lock.ts'
import type { ProviderIndex } from './provider-index.ts'
import { byKind, getEntity, KINDS, type Kind } from './rows.ts'
import { type Change, markAccepted, markRejected, markUnknown } from './transitions.ts'

/** Run on every push (bench/payment.ts): prepared by hand, names from the tables. */
const OWNER_SQL = byKind((n) => `UPDATE ${n.$} SET ${n.owner} = ? WHERE ${n.id} = ?`)

/** One request to start an STK push or a B2C disbursement. */
export interface Initiation {
  kind: Kind
  tid: string
  actorId: string | null
  key: string | null
  hash: string
  requestId?: string | undefined
  /** STK: the customer's phone, held while its prompt is open (one push per phone at a time). */
  phone?: string
  /** Throws when the tenant may not start it (checked after a replay, before anything is written). */
  entitle(): void
  /** Inserts the row and its 'created' audit row (inside the write that claims the key). */
  insert(db: Db, id: string, at: string): void
  /** The provider call. */
  call(id: string): Promise<{ providerId: string; merchantId?: string }>
  /** The answer for the row as it is now. */
  answer(db: Db, id: string): unknown
}

const FAULTS = {
  stk: 'payment.after_provider_accepted',
  b2c: 'b2c.after_provider_accepted',
} as const

/** Whether a failed provider call may still have reached the provider (anything not proven). */
export const mayHaveReached = (err: unknown) => !(err instanceof ProviderError) || err.reached

/**
 * The one path that starts a payment (STK push and B2C alike): key → row → provider → record.
 * A provider call that may have reached the provider never ends `failed` and never frees its key.
 */
export function createInitiator(deps: PaymentDeps, index: ProviderIndex) {
  const change = (r: Initiation, id: string): Change => ({
    kind: r.kind,
    tid: r.tid,
    id,
    actor: r.actorId,
    at: deps.nowIso(),
  })

  /** The answer for a key already used, or null when the key is free. */
  async function answerKnownKey(r: Initiation, db: Db): Promise<unknown | null> {
    const route = KINDS[r.kind].route
    const row = readKey(db, { tid: r.tid, route, key: r.key! }, deps.ctx.clock.nowMs())
    const d = decideKey(row, r.hash, row ? deps.inflight.has(row.ref) : false)
    if (d.action === 'new') return null
    if (d.action === 'replay') return d.body
    if (d.action === 'in_progress') throw new IdempotencyInProgress(1)
    const cur = getEntity(db, r.kind, r.tid, d.ref)
    if (!cur) throw new IdempotencyInProgress(1)
    if (cur.status === 'initiating') {
      // Nobody can still be waiting on the provider for it: its answer is lost, so it is unknown.
      if (!deps.orphaned(d.ref, cur.createdAt, cur.owner)) throw new IdempotencyInProgress(1)
      await grouped(db, () =>
        markUnknown(db, change(r, d.ref), 'the provider answer was not recorded (process ended)'),
      )
    }
    return markReplayed(await r.answer(db, d.ref))
  }

  async function callProvider(r: Initiation, db: Db, id: string): Promise<unknown> {
    const route = KINDS[r.kind].route
    let ids: { providerId: string; merchantId?: string }
    try {
      ids = await r.call(id)
    } catch (err) {
      const reason =
        err instanceof ProviderError
          ? `${err.errorCode ? `${err.errorCode} ` : ''}${err.message}`
          : `provider call failed: ${(err as Error).message}`
      if (!mayHaveReached(err)) {
        const refusal = refusalOf(err)
        deps.ctx.log.warn('the provider did not accept the request', {
          request_id: r.requestId,
          id,
          error: reason,
        })
        await grouped(db, () => {
          markRejected(deps, db, change(r, id), describeRefusal(refusal, reason))
          if (r.key) releaseKey(db, { tid: r.tid, route, key: r.key })
        })
        index.close([id])
        throw refusalError(deps, r, { id, refusal, reason })
      }
      deps.ctx.log.warn(
        'the provider may have received a request whose answer was lost; unknown until its callback',
        {
          request_id: r.requestId,
          id,
          error: reason,
        },
      )
      await grouped(db, () => markUnknown(db, change(r, id), reason))
      return r.answer(db, id)
    }
    faultPoint(FAULTS[r.kind])
    deps.alerts.clear('provider_credentials')
    const answer = await grouped(db, () => {
      markAccepted(deps, db, change(r, id), ids)
      const body = r.answer(db, id)
      if (r.key) storeAnswer(db, { tid: r.tid, route, key: r.key }, body)
      return body
    })
    index.setProviderId(id, ids.providerId)
    return answer
  }

  return async function initiate(r: Initiation): Promise<unknown> {
    const db = deps.tenantDb(r.tid)
    if (r.key) {
      const known = await answerKnownKey(r, db)
      if (known !== null) return known
    }
    r.entitle()
    const id = newId(r.kind === 'stk' ? 'pay' : 'b2c')
    const at = deps.nowIso()
    const inserted = await grouped(db, () => {
      if (r.key && !claimKey(db, { ...r, route: KINDS[r.kind].route, key: r.key, ref: id, at }))
        return false
      if (r.phone) assertPhoneFree(db, r.tid, r.phone, deps.ctx.clock.nowMs())
      r.insert(db, id, at)
      db.sqlite.query(OWNER_SQL[r.kind]).run(deps.owner, id)
      return true
    })
    if (!inserted) {
      // Another request with the same key won the race.
      const known = await answerKnownKey(r, db)
      if (known !== null) return known
      throw new IdempotencyInProgress(1)
    }
    index.add(id, r.kind, r.tid, at)
    const work = callProvider(r, db, id)
    deps.inflight.set(id, work)
    try {
      return await work
    } finally {
      deps.inflight.delete(id)
    }
  }
}

/** The reason kept on a payment the provider refused, with Daraja's own code and words. */
function describeRefusal(refusal: Refusal | null, reason: string): string {
  if (refusal === 'credentials')
    return `the payment provider refused the platform's M-Pesa settings (${reason}); nothing was charged`
  if (refusal === 'locked')
    return `another M-Pesa prompt is open on this phone (${reason}); nothing was charged, ask again in a minute`
  if (refusal === 'busy')
    return `the payment provider is busy (${reason}); nothing was charged, ask again in a few minutes`
  return reason
}

/** The answer to a refused request: what happened and what to do, never a bare 502. */
function refusalError(
  deps: PaymentDeps,
  r: Initiation,
  { id, refusal, reason }: { id: string; refusal: Refusal | null; reason: string },
): AppError {
  const extra = { payment_id: id, payment_status: 'failed' }
  if (refusal === 'credentials') {
    deps.alerts.raise(
      'provider_credentials',
      `the payment provider refused the platform's M-Pesa credentials or shortcode (${reason}): every payment fails until mpesa.consumer_key, mpesa.consumer_secret, mpesa.shortcode and mpesa.passkey are right; run \`mmp doctor --daraja\``,
    )
    return new AppError(
      'PROVIDER_MISCONFIGURED',
      `M-Pesa refused the platform's payment settings (${reason}); nothing was charged. The operator has been alerted.`,
      { extra },
    )
  }
  if (refusal === 'locked')
    return phoneBusy(
      r.phone ?? 'this phone',
      60,
      `M-Pesa says a prompt is already open on ${r.phone ?? 'this phone'} (${reason}); nothing was charged, ask again in a minute`,
    )
  return new AppError(
    'BAD_GATEWAY',
    `the payment provider did not accept the request: ${reason}`,
    refusal === 'busy' ? { extra, headers: { 'Retry-After': '60' } } : { extra },
  )
}
