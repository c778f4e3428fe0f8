import { Elysia } from 'elysia'
import { b2cResultOf } from './callbacks.ts'
import {
  type B2cRecord,
  b2cOutcome,
  newConversationId,
  type Outcome,
  receiptNumber,
  requestId,
} from './model.ts'
import {
  B2C_COMMANDS,
  firstFailure,
  oneOf,
  phone,
  present,
  shortcode,
  text,
  url,
  wholeAmount,
} from './rules.ts'
import { readDarajaRequest, type Sim } from './sim.ts'
import { duplicateOriginator } from './strict.ts'

const B2C_CHECKS = [
  present('InitiatorName'),
  present('SecurityCredential'),
  oneOf('CommandID', B2C_COMMANDS),
  wholeAmount('Amount'),
  shortcode('PartyA'),
  phone('PartyB'),
  text('Remarks', 100, 2),
  url('QueueTimeOutURL'),
  url('ResultURL'),
]

/**
 * B2C (`/mpesa/b2c/v1|v3/paymentrequest`): accepted at once, the result sent to its ResultURL
 * after the delay. The outcome is `outcomeOf` (tests) or by the phone's last four digits
 * (model.ts `b2cOutcome`).
 */
export function b2cRoutes(sim: Sim, opts: { outcomeOf?: (phone: string) => Outcome }) {
  const app = new Elysia({ name: 'mmp-simulator-b2c' }).post(
    '/mpesa/b2c/:version/paymentrequest',
    ({ request, params }) =>
      acceptB2cPayment({ sim, input: { request, version: params.version, ...opts } }),
  )
  return { app, fire: (id: string) => fireB2c({ sim, input: id }) }
}

async function acceptB2cPayment({
  sim,
  input,
}: {
  sim: Sim
  input: { request: Request; version: string; outcomeOf?: (phone: string) => Outcome }
}) {
  const body = await readDarajaRequest({ sim, input: { ...input, versions: ['v1', 'v3'] } })
  if (body instanceof Response) return body
  const refused = firstFailure(body, B2C_CHECKS)
  if (refused) return refused
  const phoneNumber = String(body.PartyB)
  const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
  const conversationId = newConversationId()
  // Daraja refuses an OriginatorConversationID it saw before, and does not pay it again.
  if (!sim.store.claimOriginator(originatorConversationId, 'b2c', conversationId))
    return duplicateOriginator()
  const outcome = input.outcomeOf ? input.outcomeOf(phoneNumber) : b2cOutcome(phoneNumber)
  const rec: B2cRecord = {
    kind: 'b2c',
    conversationId,
    originatorConversationId,
    request: body,
    outcome,
    receipt: receiptNumber(),
    decideAt: Date.now() + sim.delayMs,
    callbackStatus: null,
    callbackError: null,
  }
  sim.store.remember(conversationId, rec, phoneNumber, outcome.callback ? rec.decideAt : null)
  if (outcome.resultCode === 0)
    sim.store.issueReceipt(rec.receipt, 'b2c', conversationId, Number(body.Amount))
  if (outcome.callback) sim.schedule('b2c', conversationId, sim.delayMs)
  return {
    ConversationID: conversationId,
    OriginatorConversationID: originatorConversationId,
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  }
}

/** Sends a B2C payment's result; true when nothing is left to send. */
async function fireB2c({ sim, input: id }: { sim: Sim; input: string }): Promise<boolean> {
  const rec = sim.store.recall('b2c', id)
  if (!rec) return true
  const { url: to, body } = b2cResultOf(rec)
  return sim.delivery.post(to, body, rec)
}
