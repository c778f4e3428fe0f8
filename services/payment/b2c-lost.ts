import { newId } from '../kernel/ids.ts'
import { createDarajaTransport } from './daraja-transport.ts'
import type { PaymentDeps } from './deps.ts'
import { lostAfterMs } from './lost-push.ts'
import { getDisbursement, OPEN } from './rows.ts'
import type { Outcome } from './settle.ts'

/**
 * A disbursement whose answer was lost (the process died between M-Pesa taking the B2C request
 * and the record of its answer, and its result never came) is asked about by its
 * OriginatorConversationID, which mmp chose and stored before sending: Daraja's Transaction
 * Status (`OriginalConversationID`) answers at the disbursement's own callback URL (marked
 * `status=1`). Found and completed: `success` with its receipt; not found once it would have
 * completed: `failed`, nothing was paid.
 */
export function createLostDisbursements(
  deps: PaymentDeps,
  callbackUrl: (tid: string, ref: string, extra: string) => string,
) {
  const cfg = deps.cfg.credentials
  const { authed, unwrap } = createDarajaTransport({ baseUrl: deps.cfg.providerUrl, ...cfg })

  /** Asks about each lost disbursement old enough; returns how many were asked about. */
  async function ask(lost: Array<{ tid: string; ref: string }>): Promise<number> {
    const now = deps.ctx.clock.nowMs()
    let asked = 0
    for (const l of lost) {
      const d = getDisbursement(deps.tenantDb(l.tid), l.tid, l.ref)
      if (!d || !OPEN.has(d.status) || d.conversationId) continue
      if (Date.parse(d.createdAt) > now - lostAfterMs(deps)) continue
      await unwrap(
        authed('/mpesa/transactionstatus/v1/query', {
          Initiator: cfg.initiatorName,
          SecurityCredential: cfg.securityCredential,
          CommandID: 'TransactionStatusQuery',
          OriginalConversationID: d.id,
          OriginatorConversationID: newId('req'),
          PartyA: cfg.shortcode,
          IdentifierType: '4',
          ResultURL: callbackUrl(l.tid, d.id, '&status=1'),
          QueueTimeOutURL: callbackUrl(l.tid, d.id, '&status=1&timeout=1'),
          Remarks: 'Lost disbursement',
          Occasion: '',
        }),
      )
      asked++
    }
    return asked
  }

  return { ask }
}

/**
 * What a Transaction Status result says about a disbursement; null when it says nothing (a
 * queue timeout, a status other than Completed).
 */
export function outcomeOfStatus(
  result: Record<string, unknown>,
  timedOut: boolean,
): Outcome | null {
  if (timedOut) return null
  const code = Number(result.ResultCode)
  if (!Number.isInteger(code)) return null
  const raw = (result.ResultParameters as { ResultParameter?: unknown } | undefined)
    ?.ResultParameter
  const list = (Array.isArray(raw) ? raw : raw ? [raw] : []) as Array<{
    Key?: string
    Value?: unknown
  }>
  const param = (k: string) => list.find((i) => i?.Key === k)?.Value
  if (code === 0) {
    if (String(param('TransactionStatus') ?? '') !== 'Completed') return null
    return {
      code: 0,
      desc: 'found in M-Pesa by Transaction Status',
      receipt: param('ReceiptNo') ? String(param('ReceiptNo')) : null,
      transactionDate: null,
      counterpartyName: null,
      via: 'transaction status',
    }
  }
  return {
    code: null,
    desc: `M-Pesa has no such disbursement (${String(result.ResultDesc ?? code)}): nothing was paid`,
    receipt: null,
    transactionDate: null,
    counterpartyName: null,
    via: 'transaction status',
  }
}
