import { Elysia } from 'elysia'
import { type AsyncKind, fireBusinessResult, receiptNamed } from './business-results.ts'
import {
  type AsyncRecord,
  darajaError,
  newConversationId,
  type Outcome,
  receiptNumber,
  requestId,
} from './model.ts'
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

const ROUTES: Record<AsyncKind, { path: string; command: string }> = {
  status: { path: '/mpesa/transactionstatus/v1/query', command: 'TransactionStatusQuery' },
  balance: { path: '/mpesa/accountbalance/v1/query', command: 'AccountBalance' },
  reversal: { path: '/mpesa/reversal/v1/request', command: 'TransactionReversal' },
}

/**
 * Transaction Status (by TransactionID or OriginalConversationID), Account Balance and Reversal: each accepted at once with Daraja's
 * `{ConversationID, OriginatorConversationID, ResponseCode: "0", ResponseDescription}` and answered
 * after the delay at its ResultURL (business-results.ts). Transaction Status and Reversal know the
 * receipts the simulator issued (STK push, B2C, C2B): an unknown one is ResultCode 1 (status) or
 * R000002 (reversal), a receipt reversed already R000001. The balance is 50,000.00 plus what
 * customers paid the shortcode. A status result describes the original transaction (its amount,
 * parties and time). IdentifierType must fit PartyA (1 a phone; 2, 4 a shortcode), a reversal's
 * receiver is '11', a repeated OriginatorConversationID is 500.002.1001 Duplicate; production-like,
 * result URLs must be https.
 */
export function businessRoutes(sim: Sim) {
  const route =
    (kind: AsyncKind) =>
    ({ request }: { request: Request }) =>
      acceptBusinessRequest({ sim, input: { kind, request } })
  const app = new Elysia({ name: 'mmp-simulator-business' })
    .post(ROUTES.status.path, route('status'))
    .post(ROUTES.balance.path, route('balance'))
    .post(ROUTES.reversal.path, route('reversal'))
  const fire = (kind: AsyncKind, id: string) => fireBusinessResult({ sim, input: { kind, id } })
  return { app, fire }
}

const success = (): Outcome => ({
  resultCode: 0,
  resultDesc: 'The service request is processed successfully.',
  callback: true,
})

/** What M-Pesa will answer: found or not (status), reversed, unknown or reversed already. */
function decideOutcome({
  sim,
  input: { kind, body },
}: {
  sim: Sim
  input: { kind: AsyncKind; body: Record<string, unknown> }
}): Outcome {
  if (kind === 'balance') return success()
  const receipt = receiptNamed({ sim, input: { kind, body } })
  const known = receipt ? sim.store.receipt(receipt) : null
  if (kind === 'status')
    return known
      ? success()
      : { resultCode: 1, resultDesc: 'The transaction could not be found.', callback: true }
  if (!known || Math.round(Number(body.Amount) * 100) > known.amount)
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
  return success()
}

/** The checks Daraja makes of a request of this kind (the common ones, then its own). */
function checksOf({ sim, input: kind }: { sim: Sim; input: AsyncKind }) {
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
  const production = sim.production ? [httpsOnly('ResultURL'), httpsOnly('QueueTimeOutURL')] : []
  return [...common, ...specific, ...production]
}

/** Takes a request, decides its outcome now and calls its ResultURL back after the delay. */
async function acceptBusinessRequest({
  sim,
  input: { kind, request },
}: {
  sim: Sim
  input: { kind: AsyncKind; request: Request }
}) {
  const denied = sim.tokenRefused(request)
  if (denied) return denied
  if (kind === 'status' && sim.faults.status > 0) {
    sim.faults.status--
    return darajaError(503, '503.001.01', 'Service Unavailable')
  }
  const body = await readJsonBody(request)
  if (body instanceof Response) return body
  const refused = firstFailure(body, checksOf({ sim, input: kind }))
  if (refused) return refused
  const conversationId = newConversationId()
  const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
  if (!sim.store.claimOriginator(originatorConversationId, kind, conversationId))
    return duplicateOriginator()
  const rec: AsyncRecord = {
    kind,
    conversationId,
    originatorConversationId,
    request: body,
    outcome: decideOutcome({ sim, input: { kind, body } }),
    receipt: receiptNumber(),
    decideAt: Date.now() + sim.delayMs,
    callbackStatus: null,
    callbackError: null,
  }
  const party = String(body.PartyA ?? body.ReceiverParty ?? '')
  sim.store.remember(conversationId, rec, party, rec.decideAt)
  sim.schedule(kind, conversationId, sim.delayMs)
  return {
    OriginatorConversationID: originatorConversationId,
    ConversationID: conversationId,
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  }
}
