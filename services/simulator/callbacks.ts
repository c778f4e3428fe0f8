import {
  type AsyncRecord,
  type B2cRecord,
  type C2bRecord,
  eatTimestamp,
  type StkRecord,
} from './model.ts'

/**
 * The STK callback for a remembered request, built from the record alone so a callback still due
 * after a restart is the same as the one that would have been sent.
 */
export function stkCallbackOf(rec: StkRecord): { url: string; body: unknown } {
  const stkCallback: Record<string, unknown> = {
    MerchantRequestID: rec.merchantRequestId,
    CheckoutRequestID: rec.checkoutRequestId,
    ResultCode: rec.outcome.resultCode,
    ResultDesc: rec.outcome.resultDesc,
  }
  if (rec.outcome.resultCode === 0) {
    stkCallback.CallbackMetadata = {
      Item: [
        { Name: 'Amount', Value: Number(rec.request.Amount) },
        { Name: 'MpesaReceiptNumber', Value: rec.receipt },
        { Name: 'Balance' },
        { Name: 'TransactionDate', Value: Number(eatTimestamp(Date.now())) },
        { Name: 'PhoneNumber', Value: Number(rec.request.PhoneNumber) },
      ],
    }
  }
  return { url: String(rec.request.CallBackURL ?? ''), body: { Body: { stkCallback } } }
}

/** The B2C result for a remembered request. */
export function b2cResultOf(rec: B2cRecord): { url: string; body: unknown } {
  const { outcome } = rec
  const phone = String(rec.request.PartyB ?? '')
  const result: Record<string, unknown> = {
    ResultType: 0,
    ResultCode: outcome.resultCode,
    ResultDesc: outcome.resultDesc,
    OriginatorConversationID: rec.originatorConversationId,
    ConversationID: rec.conversationId,
    TransactionID: rec.receipt,
  }
  if (outcome.resultCode === 0) {
    const d = new Date(Date.now() + 3 * 3600_000)
    const p = (n: number) => String(n).padStart(2, '0')
    result.ResultParameters = {
      ResultParameter: [
        { Key: 'TransactionAmount', Value: Number(rec.request.Amount) },
        { Key: 'TransactionReceipt', Value: rec.receipt },
        { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
        { Key: 'B2CChargesPaidAccountAvailableFunds', Value: 0 },
        { Key: 'ReceiverPartyPublicName', Value: `${phone} - Simulated Customer` },
        {
          Key: 'TransactionCompletedDateTime',
          Value: `${p(d.getUTCDate())}.${p(d.getUTCMonth() + 1)}.${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`,
        },
        { Key: 'B2CUtilityAccountAvailableFunds', Value: 100000 },
        { Key: 'B2CWorkingAccountAvailableFunds', Value: 900000 },
      ],
    }
  }
  result.ReferenceData = {
    ReferenceItem: { Key: 'QueueTimeoutURL', Value: String(rec.request.QueueTimeOutURL ?? '') },
  }
  return { url: String(rec.request.ResultURL ?? ''), body: { Result: result } }
}

/** The payer's name the simulator makes up for a phone (Daraja sends the registered names). */
const NAMES = ['JOHN', 'MARY', 'PETER', 'GRACE', 'JAMES', 'ANNE', 'DAVID', 'FAITH']
const SURNAMES = ['KAMAU', 'WANJIKU', 'OTIENO', 'ACHIENG', 'MUTUA', 'CHEPKOECH', 'KIPROP', 'NJERI']

/**
 * A C2B v2 validation or confirmation body: the MSISDN masked (`2547 ***** 678`) as Daraja's v2
 * sends it, amounts as decimal strings, the time in Nairobi time.
 */
export function c2bBodyOf(rec: C2bRecord, balanceCents: number): Record<string, unknown> {
  const r = rec.request
  const msisdn = String(r.Msisdn ?? '')
  const n = Number(msisdn.slice(-2)) || 0
  const paybill = r.CommandID === 'CustomerPayBillOnline'
  return {
    TransactionType: paybill ? 'Pay Bill' : 'Buy Goods',
    TransID: rec.transId,
    TransTime: eatTimestamp(rec.decideAt),
    TransAmount: Number(r.Amount).toFixed(2),
    BusinessShortCode: String(r.ShortCode ?? ''),
    BillRefNumber: paybill ? String(r.BillRefNumber ?? '') : '',
    InvoiceNumber: '',
    OrgAccountBalance: (balanceCents / 100).toFixed(2),
    ThirdPartyTransID: '',
    MSISDN: `${msisdn.slice(0, 4)} ***** ${msisdn.slice(-3)}`,
    FirstName: NAMES[n % NAMES.length],
    MiddleName: '',
    LastName: SURNAMES[Math.floor(n / 8) % SURNAMES.length],
  }
}

const param = (Key: string, Value: unknown) => ({ Key, Value })

/** The result of a Transaction Status, Account Balance or Reversal request, for its ResultURL. */
export function asyncResultOf(
  rec: AsyncRecord,
  extra: Array<{ Key: string; Value: unknown }>,
): { url: string; body: unknown } {
  const result: Record<string, unknown> = {
    ResultType: 0,
    ResultCode: rec.outcome.resultCode,
    ResultDesc: rec.outcome.resultDesc,
    OriginatorConversationID: rec.originatorConversationId,
    ConversationID: rec.conversationId,
    TransactionID: rec.receipt,
  }
  if (rec.outcome.resultCode === 0) result.ResultParameters = { ResultParameter: extra }
  result.ReferenceData = {
    ReferenceItem: param('QueueTimeoutURL', String(rec.request.QueueTimeOutURL ?? '')),
  }
  return { url: String(rec.request.ResultURL ?? ''), body: { Result: result } }
}

/** Daraja's AccountBalance value: `name|currency|available|current|reserved|uncleared&…`. */
export function accountBalanceValue(workingCents: number): string {
  const f = (c: number) => (c / 100).toFixed(2)
  return [
    `Working Account|KES|${f(workingCents)}|${f(workingCents)}|0.00|0.00`,
    'Float Account|KES|0.00|0.00|0.00|0.00',
    'Utility Account|KES|0.00|0.00|0.00|0.00',
    'Charges Paid Account|KES|0.00|0.00|0.00|0.00',
    'Organization Settlement Account|KES|0.00|0.00|0.00|0.00',
  ].join('&')
}

export { param }
