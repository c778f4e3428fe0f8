import { outcomeOfStatus } from './b2c-lost.ts'
import { type CallbackAuth, InvalidCallback, jsonBody } from './callback-auth.ts'
import type { PaymentDeps } from './deps.ts'
import { answerLost, awaitCall, bindLost } from './lost-answer.ts'
import type { ProviderIndex } from './provider-index.ts'
import { getDisbursement, OPEN } from './rows.ts'
import { settle } from './settle.ts'

const ACK = { ResultCode: 0, ResultDesc: 'Accepted' }

/**
 * A disbursement's result (or queue timeout) at its ResultURL: the token names the tenant and the
 * disbursement; a result whose answer was lost binds it first; settled once. With `status=1`: the
 * answer to reconciliation's Transaction Status about a disbursement whose answer was lost.
 */
export async function takeB2cResult(
  ctx: { deps: PaymentDeps; auth: CallbackAuth; index: ProviderIndex },
  input: { query: Record<string, string | undefined>; raw: unknown; ip: string | null },
) {
  const { deps, auth } = ctx
  const { query, raw, ip: sourceIp } = input
  const { tid, ref } = auth.checkToken('b2c', query)
  auth.checkSource(sourceIp)
  const result = (jsonBody(raw) as { Result?: Record<string, unknown> } | null)?.Result
  if (!result) throw new InvalidCallback('the result names no transaction')
  const db = deps.tenantDb(tid)
  // The answer to reconciliation's Transaction Status about a disbursement whose answer was lost.
  if (query.status === '1') {
    const o = outcomeOfStatus(result, query.timeout === '1')
    const d = getDisbursement(db, tid, ref)
    if (o && d && OPEN.has(d.status) && !d.conversationId)
      await settle(deps, { db, kind: 'b2c', tid, id: ref }, o)
    return ACK
  }
  await awaitCall(deps, ref)
  let d = getDisbursement(db, tid, ref)
  const conversationId =
    typeof result.ConversationID === 'string' ? result.ConversationID : undefined
  if (
    d &&
    conversationId &&
    answerLost(deps, { status: d.status, providerId: d.conversationId, ref })
  ) {
    await bindLost(ctx, { db, kind: 'b2c', tid, ref, ids: { providerId: conversationId } })
    d = getDisbursement(db, tid, ref)
  }
  // OriginatorConversationID is our id; ConversationID must match the provider's answer when we
  // recorded one.
  if (
    !d ||
    (result.OriginatorConversationID !== undefined && result.OriginatorConversationID !== d.id) ||
    (d.conversationId !== null &&
      result.ConversationID !== undefined &&
      result.ConversationID !== d.conversationId)
  )
    throw new InvalidCallback('the result token does not belong to this disbursement')
  if (!OPEN.has(d.status)) return ACK
  const timedOut = query.timeout === '1'
  const code = timedOut && result.ResultCode === undefined ? 1037 : Number(result.ResultCode)
  const params = ((result.ResultParameters as { ResultParameter?: unknown } | undefined)
    ?.ResultParameter ?? []) as Array<{ Key?: string; Value?: unknown }>
  const param = (k: string) =>
    (Array.isArray(params) ? params : [params]).find((i) => i?.Key === k)?.Value
  const publicName = param('ReceiverPartyPublicName')
  await settle(
    deps,
    { db, kind: 'b2c', tid, id: ref },
    {
      code: Number.isInteger(code) ? code : null,
      desc: String(result.ResultDesc ?? (timedOut ? 'queue timeout' : '')),
      receipt: (param('TransactionReceipt') ?? result.TransactionID ?? null) as string | null,
      transactionDate: null,
      counterpartyName:
        typeof publicName === 'string'
          ? publicName.split(' - ').slice(1).join(' - ') || null
          : null,
      via: timedOut ? 'queue timeout' : 'result',
    },
  )
  return ACK
}
