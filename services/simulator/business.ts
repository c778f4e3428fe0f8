import { Elysia } from 'elysia'
import { accountBalanceValue, asyncResultOf, eatTimestamp, param } from './callbacks.ts'
import { type AsyncRecord, darajaError, type Outcome, receiptNumber, requestId } from './model.ts'
import {
  firstFailure,
  IDENTIFIER_TYPES,
  oneOf,
  present,
  readJsonBody,
  shortcode,
  text,
  url,
  wholeAmount,
} from './rules.ts'
import type { Sim } from './sim.ts'

type AsyncKind = AsyncRecord['kind']

const ROUTES: Record<AsyncKind, { path: string; command: string }> = {
  status: { path: '/mpesa/transactionstatus/v1/query', command: 'TransactionStatusQuery' },
  balance: { path: '/mpesa/accountbalance/v1/query', command: 'AccountBalance' },
  reversal: { path: '/mpesa/reversal/v1/request', command: 'TransactionReversal' },
}

/**
 * Transaction Status, Account Balance and Reversal: each accepted at once with Daraja's
 * `{ConversationID, OriginatorConversationID, ResponseCode: "0", ResponseDescription}` and answered
 * after the delay at its ResultURL. Transaction Status and Reversal know the receipts the simulator
 * issued (STK push, B2C, C2B): an unknown one is ResultCode 1 (status) or R000002 (reversal), a
 * receipt reversed already R000001. The balance is 50,000.00 plus what customers paid the shortcode.
 */
export function businessRoutes(sim: Sim) {
  function decide(kind: AsyncKind, b: Record<string, unknown>): Outcome {
    if (kind === 'balance')
      return {
        resultCode: 0,
        resultDesc: 'The service request is processed successfully.',
        callback: true,
      }
    const known = sim.store.receipt(String(b.TransactionID ?? ''))
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
    if (!sim.store.reverse(String(b.TransactionID)))
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
    const known = sim.store.receipt(String(b.TransactionID ?? ''))
    const amount = rec.kind === 'reversal' ? Number(b.Amount) : (known?.amount ?? 0) / 100
    if (rec.kind === 'reversal')
      return [
        param(
          'DebitAccountBalance',
          `Utility Account|KES|${(sim.store.balanceOf(String(b.ReceiverParty)) / 100).toFixed(2)}|0.00|0.00|0.00`,
        ),
        param('Amount', amount),
        param('TransCompletedTime', at),
        param('OriginalTransactionID', String(b.TransactionID)),
        param('Charge', 0),
        param('CreditPartyPublicName', 'Simulated Customer'),
        param('DebitPartyPublicName', `${b.ReceiverParty} - Simulated Business`),
      ]
    return [
      param('ReceiptNo', String(b.TransactionID)),
      param('TransactionStatus', 'Completed'),
      param('Amount', amount),
      param('ReasonType', 'Pay Bill Online'),
      param('DebitPartyName', 'Simulated Customer'),
      param('CreditPartyName', `${b.PartyA} - Simulated Business`),
      param('InitiatedTime', at),
      param('FinalisedTime', at),
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
      if (!sim.bearerOk(request)) return darajaError(401, '404.001.03', 'Invalid Access Token')
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
              oneOf('RecieverIdentifierType', IDENTIFIER_TYPES),
            ]
          : kind === 'status'
            ? [
                present('TransactionID'),
                present('PartyA'),
                oneOf('IdentifierType', IDENTIFIER_TYPES),
              ]
            : [shortcode('PartyA'), oneOf('IdentifierType', IDENTIFIER_TYPES)]
      const refused = firstFailure(body, [...common, ...specific])
      if (refused) return refused
      const conversationId = `AG_${eatTimestamp(Date.now()).slice(0, 8)}_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}`
      const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
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
