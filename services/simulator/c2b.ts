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
import type { Sim } from './sim.ts'
import { httpsOnly } from './strict.ts'

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
  /** Delivers a C2B payment's callbacks; true when nothing is left to send. */
  async function fire(id: string): Promise<boolean> {
    const rec = sim.store.recall('c2b', id)
    if (!rec?.confirmationUrl) return true
    const shortcodeOf = String(rec.request.ShortCode ?? '')
    if (rec.validation === null) {
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
      const proceed =
        verdict === '0' || (verdict === 'unreachable' && rec.responseType === 'Completed')
      if (proceed) sim.store.credit(shortcodeOf, Math.round(Number(rec.request.Amount) * 100))
      sim.store.update(id, rec)
      if (!proceed) return true
    }
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

  const app = new Elysia({ name: 'mmp-simulator-c2b' })
    .post('/mpesa/c2b/:version/registerurl', async ({ request, params }) => {
      if (params.version !== 'v1' && params.version !== 'v2')
        return darajaError(404, '404.001.01', 'Resource not found')
      const denied = sim.tokenRefused(request)
      if (denied) return denied
      const body = await readJsonBody(request)
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
      sim.store.registerUrls(
        String(body.ShortCode),
        String(body.ResponseType),
        String(body.ConfirmationURL),
        String(body.ValidationURL),
      )
      return {
        // Daraja's own spelling.
        OriginatorCoversationID: requestId(),
        ResponseCode: '0',
        ResponseDescription: 'Success',
      }
    })
    .post('/mpesa/c2b/:version/simulate', async ({ request, params }) => {
      if (params.version !== 'v1' && params.version !== 'v2')
        return darajaError(404, '404.001.01', 'Resource not found')
      const denied = sim.tokenRefused(request)
      if (denied) return denied
      const body = await readJsonBody(request)
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
      const transId = receiptNumber()
      const decideAt = Date.now() + sim.delayMs
      const rec: C2bRecord = {
        kind: 'c2b',
        transId,
        request: body,
        validationUrl: urls?.validation_url ?? null,
        confirmationUrl: urls?.confirmation_url ?? null,
        responseType: urls?.response_type ?? 'Completed',
        validation: null,
        confirmed: false,
        decideAt,
        callbackStatus: null,
        callbackError: null,
      }
      sim.store.remember(transId, rec, String(body.Msisdn), urls ? decideAt : null)
      sim.store.issueReceipt(transId, 'c2b', transId, Number(body.Amount))
      if (urls) sim.schedule('c2b', transId, sim.delayMs)
      return {
        OriginatorCoversationID: requestId(),
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      }
    })
    // Test helper (not Daraja): a payment M-Pesa made whose confirmation the test sends itself,
    // so Transaction Status knows it. `TransTime` (Nairobi YYYYMMDDHHmmss) defaults to now.
    .post('/simulator/c2b/payments', async ({ request }) => {
      const body = await readJsonBody(request)
      if (body instanceof Response) return body
      const refused = firstFailure(body, [
        present('TransID'),
        shortcode('ShortCode'),
        wholeAmount('Amount'),
      ])
      if (refused) return refused
      const time = /^\d{14}$/.exec(String(body.TransTime ?? ''))?.[0]
      const at = time
        ? Date.UTC(
            +time.slice(0, 4),
            +time.slice(4, 6) - 1,
            +time.slice(6, 8),
            +time.slice(8, 10),
            +time.slice(10, 12),
            +time.slice(12, 14),
          ) -
          3 * 3600_000
        : Date.now()
      const transId = String(body.TransID)
      const rec: C2bRecord = {
        kind: 'c2b',
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
        confirmed: false,
        decideAt: at,
        callbackStatus: null,
        callbackError: null,
      }
      sim.store.remember(transId, rec, String(body.Msisdn ?? ''), null)
      sim.store.issueReceipt(transId, 'c2b', transId, Number(body.Amount))
      return { TransID: transId, recorded: true }
    })
    .delete('/simulator/c2b/urls/:shortcode', ({ params }) =>
      sim.store.deleteUrls(params.shortcode)
        ? { shortcode: params.shortcode, deleted: true }
        : darajaError(404, '404.001.01', 'Resource not found'),
    )
  return { app, fire }
}
