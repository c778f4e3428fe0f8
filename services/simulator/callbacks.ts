import type { B2cRecord, StkRecord } from './model.ts'

/** Daraja's timestamp: YYYYMMDDHHmmss in East Africa Time. */
export function eatTimestamp(at: number): string {
  const d = new Date(at + 3 * 3600_000)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
}

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
