import type { Db } from '../kernel/db.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import type { ProviderIndex } from './provider-index.ts'
import type { Kind } from './rows.ts'
import { markAccepted } from './transitions.ts'

/** Waits for this process's provider call for `ref` to finish (the callback can beat it). */
export async function awaitCall(deps: PaymentDeps, ref: string) {
  const pending = deps.inflight.get(ref)
  if (pending) await pending.catch(() => {})
}

/** A request whose provider answer was lost: no provider id and no call of this process on it. */
export const answerLost = (
  deps: PaymentDeps,
  r: { status: string; providerId: string | null; ref: string },
) =>
  (r.status === 'initiating' || r.status === 'unknown') &&
  !r.providerId &&
  !deps.inflight.has(r.ref)

/**
 * The request whose answer was lost (its process died, or the call timed out after sending) is
 * bound to the provider's id named by its authenticated callback: the token in the URL was
 * issued for exactly this payment.
 */
export async function bindLost(
  ctx: { deps: PaymentDeps; index: ProviderIndex },
  lost: {
    db: Db
    kind: Kind
    tid: string
    ref: string
    ids: { providerId: string; merchantId?: string }
  },
) {
  const { deps } = ctx
  const { db, kind, tid, ref, ids } = lost
  const bound = await grouped(db, () =>
    markAccepted(deps, db, { kind, tid, id: ref, actor: null, at: deps.nowIso() }, ids),
  )
  if (bound) ctx.index.setProviderId(ref, ids.providerId)
}
