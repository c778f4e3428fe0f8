import { Elysia } from 'elysia'
import { c2bBodyOf } from './callbacks.ts'
import { type C2bRecord, darajaError, receiptNumber, requestId } from './model.ts'
import {
  firstFailure,
  oneOf,
  phone,
  present,
  readJsonBody,
  registrableUrl,
  shortcode,
  text,
  wholeAmount,
} from './rules.ts'
import { readDarajaRequest, type Sim } from './sim.ts'
import { httpsOnly } from './strict.ts'

const C2B_VERSIONS = ['v1', 'v2'] as const

/**
 * C2B as Daraja serves it: Register URL (`/mpesa/c2b/v1|v2/registerurl`) keeps a shortcode's
 * confirmation and validation URLs; simulate (`/mpesa/c2b/v1|v2/simulate`, sandbox only) is a
 * customer paying the till or paybill. After the delay the registered validation URL is asked
 * (a ResultCode other than "0" stops the payment; no answer: the registered ResponseType
 * decides), then the confirmation URL is told, with the C2B v2 body. As Daraja: the validation
 * request carries no OrgAccountBalance, and a ThirdPartyTransID the validation URL answers with is
 * echoed in the confirmation. Production-like (`production`), URLs must be https and a shortcode
 * registers once (`DELETE /simulator/c2b/urls/{shortcode}` stands for the portal's URL management).
 */
export function c2bRoutes(sim: Sim) {
  const app = new Elysia({ name: 'mmp-simulator-c2b' })
    .post('/mpesa/c2b/:version/registerurl', ({ request, params }) =>
      registerC2bUrls({ sim, input: { request, version: params.version } }),
    )
    .post('/mpesa/c2b/:version/simulate', ({ request, params }) =>
      simulateC2bPayment({ sim, input: { request, version: params.version } }),
    )
    // Test helper (not Daraja): a payment M-Pesa made whose confirmation the test sends itself,
    // so Transaction Status knows it. `TransTime` (Nairobi YYYYMMDDHHmmss) defaults to now.
    .post('/simulator/c2b/payments', ({ request }) => recordMadePayment({ sim, input: request }))
    .delete('/simulator/c2b/urls/:shortcode', ({ params }) =>
      sim.store.deleteUrls(params.shortcode)
        ? { shortcode: params.shortcode, deleted: true }
        : darajaError(404, '404.001.01', 'Resource not found'),
    )
  return { app, fire: (id: string) => fireC2b({ sim, input: id }) }
}

type C2bRequest = { request: Request; version: string }

async function registerC2bUrls({ sim, input }: { sim: Sim; input: C2bRequest }) {
  const body = await readDarajaRequest({ sim, input: { ...input, versions: C2B_VERSIONS } })
  if (body instanceof Response) return body
  const refused = firstFailure(body, [
    shortcode('ShortCode'),
    oneOf('ResponseType', ['Completed', 'Cancelled']),
    registrableUrl('ConfirmationURL'),
    registrableUrl('ValidationURL'),
    ...(sim.production ? [httpsOnly('ConfirmationURL'), httpsOnly('ValidationURL')] : []),
  ])
  if (refused) return refused
  // Production registers a shortcode's URLs once; they are changed by deleting them on the
  // M-Pesa portal first (here: DELETE /simulator/c2b/urls/{shortcode}). The sandbox overwrites.
  if (sim.production && sim.store.urlsOf(String(body.ShortCode)))
    return darajaError(500, '500.003.1001', 'Urls are already registered')
  sim.store.registerUrls({
    shortcode: String(body.ShortCode),
    responseType: String(body.ResponseType),
    confirmationUrl: String(body.ConfirmationURL),
    validationUrl: String(body.ValidationURL),
  })
  // Daraja's own spelling.
  return { OriginatorCoversationID: requestId(), ResponseCode: '0', ResponseDescription: 'Success' }
}

async function simulateC2bPayment({ sim, input }: { sim: Sim; input: C2bRequest }) {
  const body = await readDarajaRequest({ sim, input: { ...input, versions: C2B_VERSIONS } })
  if (body instanceof Response) return body
  const refused = firstFailure(body, [
    shortcode('ShortCode'),
    oneOf('CommandID', ['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']),
    wholeAmount('Amount'),
    phone('Msisdn'),
    text('BillRefNumber', 20, 0),
  ])
  if (refused) return refused
  const urls = sim.store.urlsOf(String(body.ShortCode))
  const rec = c2bRecord({
    transId: receiptNumber(),
    request: body,
    validationUrl: urls?.validation_url ?? null,
    confirmationUrl: urls?.confirmation_url ?? null,
    responseType: urls?.response_type ?? 'Completed',
    validation: null,
    decideAt: Date.now() + sim.delayMs,
  })
  rememberPayment({ sim, input: { rec, phone: String(body.Msisdn), callback: !!urls } })
  return {
    OriginatorCoversationID: requestId(),
    ResponseCode: '0',
    ResponseDescription: 'Accept the service request successfully.',
  }
}

async function recordMadePayment({ sim, input: request }: { sim: Sim; input: Request }) {
  const body = await readJsonBody(request)
  if (body instanceof Response) return body
  const refused = firstFailure(body, [
    present('TransID'),
    shortcode('ShortCode'),
    wholeAmount('Amount'),
  ])
  if (refused) return refused
  const transId = String(body.TransID)
  const rec = c2bRecord({
    transId,
    request: {
      ShortCode: body.ShortCode,
      Amount: body.Amount,
      CommandID: 'CustomerBuyGoodsOnline',
    },
    validationUrl: null,
    confirmationUrl: null,
    responseType: 'Completed',
    validation: '0',
    decideAt: nairobiTimeMs(body.TransTime) ?? Date.now(),
  })
  rememberPayment({ sim, input: { rec, phone: String(body.Msisdn ?? ''), callback: false } })
  return { TransID: transId, recorded: true }
}

/** A C2B payment as it is first remembered: not confirmed, no callback sent yet. */
const c2bRecord = (
  fields: Omit<C2bRecord, 'kind' | 'confirmed' | 'callbackStatus' | 'callbackError'>,
): C2bRecord => ({
  kind: 'c2b',
  ...fields,
  confirmed: false,
  callbackStatus: null,
  callbackError: null,
})

/** Remembers a payment (with its callback when URLs are registered) and issues its receipt. */
function rememberPayment({
  sim,
  input: { rec, phone, callback },
}: {
  sim: Sim
  input: { rec: C2bRecord; phone: string; callback: boolean }
}) {
  sim.store.remember(rec.transId, rec, phone, callback ? rec.decideAt : null)
  sim.store.issueReceipt(rec.transId, 'c2b', rec.transId, Number(rec.request.Amount))
  if (callback) sim.schedule('c2b', rec.transId, sim.delayMs)
}

/** Daraja's `YYYYMMDDHHmmss` in Nairobi time (UTC+3) as epoch ms; null when not that. */
function nairobiTimeMs(v: unknown): number | null {
  const time = /^\d{14}$/.exec(String(v ?? ''))?.[0]
  if (!time) return null
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) =>
    Number(time.slice(at, at + (i === 0 ? 4 : 2))),
  ) as [number, number, number, number, number, number]
  return Date.UTC(y, mo - 1, d, h, mi, s) - 3 * 3600_000
}

/** Delivers a C2B payment's callbacks; true when nothing is left to send. */
async function fireC2b({ sim, input: id }: { sim: Sim; input: string }): Promise<boolean> {
  const rec = sim.store.recall('c2b', id)
  if (!rec?.confirmationUrl) return true
  const shortcodeOf = String(rec.request.ShortCode ?? '')
  if (rec.validation === null && !(await validatePayment({ sim, input: { id, rec, shortcodeOf } })))
    return true
  const delivered = await sim.delivery.post(
    rec.confirmationUrl,
    {
      ...c2bBodyOf(rec, sim.store.balanceOf(shortcodeOf)),
      ThirdPartyTransID: rec.thirdPartyTransId ?? '',
    },
    rec,
  )
  if (delivered) {
    rec.confirmed = true
    sim.store.update(id, rec)
  }
  return delivered
}

/**
 * Asks the validation URL (no answer: the registered ResponseType decides) and credits the
 * shortcode when the payment goes ahead; false when it is stopped.
 */
async function validatePayment({
  sim,
  input: { id, rec, shortcodeOf },
}: {
  sim: Sim
  input: { id: string; rec: C2bRecord; shortcodeOf: string }
}): Promise<boolean> {
  let verdict = 'unreachable'
  if (rec.validationUrl) {
    // Daraja's validation request carries no balance: the payment has not happened yet.
    const answer = await sim.delivery.ask(rec.validationUrl, {
      ...c2bBodyOf(rec, 0),
      OrgAccountBalance: '',
    })
    if (answer) verdict = String(answer.ResultCode ?? '')
    const thirdParty = String(answer?.ThirdPartyTransID ?? '').trim()
    if (verdict === '0' && thirdParty) rec.thirdPartyTransId = thirdParty.slice(0, 40)
  }
  rec.validation = verdict
  const proceed = verdict === '0' || (verdict === 'unreachable' && rec.responseType === 'Completed')
  if (proceed) sim.store.credit(shortcodeOf, Math.round(Number(rec.request.Amount) * 100))
  sim.store.update(id, rec)
  return proceed
}
