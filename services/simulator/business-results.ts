import { accountBalanceValue, asyncResultOf, param } from './callbacks.ts'
import { type AsyncRecord, eatTimestamp } from './model.ts'
import type { Sim } from './sim.ts'

export type AsyncKind = AsyncRecord['kind']

/**
 * The receipt a Transaction Status or Reversal names: its TransactionID, or (status only) the
 * receipt of the request its OriginalConversationID names.
 */
export function receiptNamed({
  sim,
  input: { kind, body },
}: {
  sim: Sim
  input: { kind: AsyncKind; body: Record<string, unknown> }
}): string {
  const given = String(body.TransactionID ?? '').trim()
  if (given || kind !== 'status') return given
  const named = sim.store.originator(String(body.OriginalConversationID ?? ''))
  const rec = named ? sim.store.recall(named.kind, named.id) : undefined
  return rec && 'receipt' in rec && rec.outcome.resultCode === 0 ? String(rec.receipt) : ''
}

/** Who was paid or paid, and when, for the receipt's own request. */
function originalOf({ sim, input: receipt }: { sim: Sim; input: string }) {
  const known = sim.store.receipt(receipt)
  if (!known) return null
  const rec = sim.store.recall(known.kind, known.id)
  const r = (rec?.request ?? {}) as Record<string, unknown>
  const org =
    known.kind === 'c2b'
      ? r.ShortCode
      : known.kind === 'stk'
        ? (r.PartyB ?? r.BusinessShortCode)
        : r.PartyA
  return {
    amount: known.amount / 100,
    org: String(org ?? ''),
    at: rec?.decideAt ?? Date.now(),
    reason:
      known.kind === 'c2b' && r.CommandID === 'CustomerBuyGoodsOnline'
        ? 'Buy Goods'
        : 'Pay Bill Online',
    outgoing: known.kind === 'b2c',
  }
}

/** The ResultParameters of a successful Transaction Status, Account Balance or Reversal. */
function resultParameters({ sim, input: rec }: { sim: Sim; input: AsyncRecord }) {
  const b = rec.request
  const at = Number(eatTimestamp(rec.decideAt))
  if (rec.kind === 'balance')
    return [
      param('AccountBalance', accountBalanceValue(sim.store.balanceOf(String(b.PartyA)))),
      param('BOCompletedTime', at),
    ]
  const receipt = receiptNamed({ sim, input: { kind: rec.kind, body: b } })
  if (rec.kind === 'reversal')
    return [
      param(
        'DebitAccountBalance',
        `Utility Account|KES|${(sim.store.balanceOf(String(b.ReceiverParty)) / 100).toFixed(2)}|0.00|0.00|0.00`,
      ),
      param('Amount', Number(b.Amount)),
      param('TransCompletedTime', at),
      param('OriginalTransactionID', receipt),
      param('Charge', 0),
      param('CreditPartyPublicName', 'Simulated Customer'),
      param('DebitPartyPublicName', `${b.ReceiverParty} - Simulated Business`),
    ]
  // The original transaction as M-Pesa recorded it: its amount, its parties, its time.
  const original = originalOf({ sim, input: receipt })
  const org = `${original?.org || b.PartyA} - Simulated Business`
  const when = Number(eatTimestamp(original?.at ?? rec.decideAt))
  return [
    param('ReceiptNo', receipt),
    param('TransactionStatus', 'Completed'),
    param('Amount', original?.amount ?? 0),
    param(
      'ReasonType',
      original?.outgoing
        ? 'Business Payment to Customer via API'
        : (original?.reason ?? 'Pay Bill Online'),
    ),
    param('DebitPartyName', original?.outgoing ? org : 'Simulated Customer'),
    param('CreditPartyName', original?.outgoing ? 'Simulated Customer' : org),
    param('InitiatedTime', when),
    param('FinalisedTime', when),
    param('TransactionReason', ''),
    param('ConversationID', rec.conversationId),
  ]
}

/** Sends a remembered request's result to its ResultURL; true when nothing is left to send. */
export async function fireBusinessResult({
  sim,
  input: { kind, id },
}: {
  sim: Sim
  input: { kind: AsyncKind; id: string }
}): Promise<boolean> {
  const rec = sim.store.recall(kind, id)
  if (!rec) return true
  const { url: to, body } = asyncResultOf(rec, resultParameters({ sim, input: rec }))
  return sim.delivery.post(to, body, rec)
}
