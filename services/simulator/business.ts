import { Elysia } from 'elysia'
import { accountBalanceValue, asyncResultOf, eatTimestamp, param } from './callbacks.ts'
import { type AsyncRecord, darajaError, type Outcome, receiptNumber, requestId } from './model.ts'
import {
  firstFailure,
  oneOf,
  present,
  readJsonBody,
  shortcode,
  text,
  url,
  wholeAmount,
} from './rules.ts'
import type { Sim } from './sim.ts'
import { duplicateOriginator, httpsOnly, identifierFits } from './strict.ts'

/** Transaction Status names the transaction by its receipt or by its OriginalConversationID. */
const transactionNamed = (b: Record<string, unknown>) =>
  present('TransactionID')(b) === null || present('OriginalConversationID')(b) === null
    ? null
    : present('TransactionID')(b)

type AsyncKind = AsyncRecord['kind']

const ROUTES: Record<AsyncKind, { path: string; command: string }> = {
  status: { path: '/mpesa/transactionstatus/v1/query', command: 'TransactionStatusQuery' },
  balance: { path: '/mpesa/accountbalance/v1/query', command: 'AccountBalance' },
  reversal: { path: '/mpesa/reversal/v1/request', command: 'TransactionReversal' },
}

/**
 * Transaction Status (by TransactionID or OriginalConversationID), Account Balance and Reversal: each accepted at once with Daraja's
 * `{ConversationID, OriginatorConversationID, ResponseCode: "0", ResponseDescription}` and answered
 * after the delay at its ResultURL. Transaction Status and Reversal know the receipts the simulator
 * issued (STK push, B2C, C2B): an unknown one is ResultCode 1 (status) or R000002 (reversal), a
 * receipt reversed already R000001. The balance is 50,000.00 plus what customers paid the shortcode.
 * A status result describes the original transaction (its amount, parties and time). IdentifierType
 * must fit PartyA (1 a phone; 2, 4 a shortcode), a reversal's receiver is '11', a repeated
 * OriginatorConversationID is 500.002.1001 Duplicate; production-like, result URLs must be https.
 */
export function businessRoutes(sim: Sim) {
  /**
   * The receipt a Transaction Status or Reversal names: its TransactionID, or (status only) the
   * receipt of the request its OriginalConversationID names.
   */
  function receiptOf(kind: AsyncKind, b: Record<string, unknown>): string {
    const given = String(b.TransactionID ?? '').trim()
    if (given || kind !== 'status') return given
    const named = sim.store.originator(String(b.OriginalConversationID ?? ''))
    const rec = named ? sim.store.recall(named.kind, named.id) : undefined
    return rec && 'receipt' in rec && rec.outcome.resultCode === 0 ? String(rec.receipt) : ''
  }

  /** Who was paid or paid, and when, for the receipt's own request. */
  function originalOf(receipt: string) {
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

  function decide(kind: AsyncKind, b: Record<string, unknown>): Outcome {
    if (kind === 'balance')
      return {
        resultCode: 0,
        resultDesc: 'The service request is processed successfully.',
        callback: true,
      }
    const receipt = receiptOf(kind, b)
    const known = receipt ? sim.store.receipt(receipt) : null
    if (kind === 'status')
      return known
        ? {
            resultCode: 0,
            resultDesc: 'The service request is processed successfully.',
            callback: true,
          }
        : { resultCode: 1, resultDesc: 'The transaction could not be found.', callback: true }
    if (!known || Math.round(Number(b.Amount) * 100) > known.amount)
      return {
        resultCode: 'R000002',
        resultDesc: 'The OriginalTransactionID is invalid.',
        callback: true,
      }
    if (!sim.store.reverse(receipt))
      return {
        resultCode: 'R000001',
        resultDesc: 'The transaction has already been reversed.',
        callback: true,
      }
    return {
      resultCode: 0,
      resultDesc: 'The service request is processed successfully.',
      callback: true,
    }
  }

  function parametersOf(rec: AsyncRecord) {
    const b = rec.request
    const at = Number(eatTimestamp(rec.decideAt))
    if (rec.kind === 'balance')
      return [
        param('AccountBalance', accountBalanceValue(sim.store.balanceOf(String(b.PartyA)))),
        param('BOCompletedTime', at),
      ]
    const receipt = receiptOf(rec.kind, b)
    const original = originalOf(receipt)
    const amount = rec.kind === 'reversal' ? Number(b.Amount) : (original?.amount ?? 0)
    if (rec.kind === 'reversal')
      return [
        param(
          'DebitAccountBalance',
          `Utility Account|KES|${(sim.store.balanceOf(String(b.ReceiverParty)) / 100).toFixed(2)}|0.00|0.00|0.00`,
        ),
        param('Amount', amount),
        param('TransCompletedTime', at),
        param('OriginalTransactionID', receipt),
        param('Charge', 0),
        param('CreditPartyPublicName', 'Simulated Customer'),
        param('DebitPartyPublicName', `${b.ReceiverParty} - Simulated Business`),
      ]
    // The original transaction as M-Pesa recorded it: its amount, its parties, its time.
    const org = `${original?.org || b.PartyA} - Simulated Business`
    const when = Number(eatTimestamp(original?.at ?? rec.decideAt))
    return [
      param('ReceiptNo', receipt),
      param('TransactionStatus', 'Completed'),
      param('Amount', amount),
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

  async function fire(kind: AsyncKind, id: string): Promise<boolean> {
    const rec = sim.store.recall(kind, id)
    if (!rec) return true
    const { url: to, body } = asyncResultOf(rec, parametersOf(rec))
    return sim.delivery.post(to, body, rec)
  }

  const route =
    (kind: AsyncKind) =>
    async ({ request }: { request: Request }) => {
      const denied = sim.tokenRefused(request)
      if (denied) return denied
      if (kind === 'status' && sim.faults.status > 0) {
        sim.faults.status--
        return darajaError(503, '503.001.01', 'Service Unavailable')
      }
      const body = await readJsonBody(request)
      if (body instanceof Response) return body
      const common = [
        present('Initiator'),
        present('SecurityCredential'),
        oneOf('CommandID', [ROUTES[kind].command]),
        url('ResultURL'),
        url('QueueTimeOutURL'),
        text('Remarks', 100, 2),
      ]
      const specific =
        kind === 'reversal'
          ? [
              present('TransactionID'),
              wholeAmount('Amount'),
              shortcode('ReceiverParty'),
              // Daraja's reversal takes the receiver as an organisation: '11' only.
              oneOf('RecieverIdentifierType', ['11']),
            ]
          : kind === 'status'
            ? [transactionNamed, identifierFits('IdentifierType', 'PartyA', ['1', '2', '4'])]
            : [shortcode('PartyA'), identifierFits('IdentifierType', 'PartyA', ['2', '4'])]
      const refused = firstFailure(body, [
        ...common,
        ...specific,
        ...(sim.production ? [httpsOnly('ResultURL'), httpsOnly('QueueTimeOutURL')] : []),
      ])
      if (refused) return refused
      const conversationId = `AG_${eatTimestamp(Date.now()).slice(0, 8)}_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}`
      const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
      if (!sim.store.claimOriginator(originatorConversationId, kind, conversationId))
        return duplicateOriginator()
      const rec: AsyncRecord = {
        kind,
        conversationId,
        originatorConversationId,
        request: body,
        outcome: decide(kind, body),
        receipt: receiptNumber(),
        decideAt: Date.now() + sim.delayMs,
        callbackStatus: null,
        callbackError: null,
      }
      sim.store.remember(
        conversationId,
        rec,
        String(body.PartyA ?? body.ReceiverParty ?? ''),
        rec.decideAt,
      )
      sim.schedule(kind, conversationId, sim.delayMs)
      return {
        OriginatorConversationID: originatorConversationId,
        ConversationID: conversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      }
    }

  const app = new Elysia({ name: 'mmp-simulator-business' })
    .post(ROUTES.status.path, route('status'))
    .post(ROUTES.balance.path, route('balance'))
    .post(ROUTES.reversal.path, route('reversal'))
  return { app, fire }
}
