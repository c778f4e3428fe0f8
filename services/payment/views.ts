import { toMajor } from '../kernel/money.ts'
import { resultMessage } from './result-codes.ts'
import type { DisbursementRow, PaymentRow, PaymentStatus } from './rows.ts'

type Visible = Exclude<PaymentStatus, 'initiating'>

/** `initiating` lasts only while this process waits for the provider: clients see `pending`. */
const visible = (s: PaymentStatus): Visible => (s === 'initiating' ? 'pending' : s)

/**
 * A payment as clients read it. Until the provider's CheckoutRequestID is known (a request whose
 * answer was lost), our own payment id stands in for it: GET status answers for either.
 */
export function paymentView(p: PaymentRow) {
  return {
    checkout_request_id: p.checkoutRequestId ?? p.id,
    merchant_request_id: p.merchantRequestId,
    status: visible(p.status),
    result_code: p.resultCode,
    result_desc: p.resultDesc,
    result_message: resultMessage(p),
    mpesa_receipt_number: p.mpesaReceiptNumber,
    amount: toMajor(p.amountCents),
    phone_number: p.phoneNumber,
    account_reference: p.accountReference,
    transaction_desc: p.transactionDesc,
    transaction_id: p.transactionId,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  }
}

export function disbursementView(d: DisbursementRow) {
  return {
    id: d.id,
    originator_conversation_id: d.id,
    conversation_id: d.conversationId,
    status: visible(d.status),
    result_code: d.resultCode,
    result_desc: d.resultDesc,
    transaction_receipt: d.transactionReceipt,
    receiver_name: d.receiverName,
    amount: toMajor(d.amountCents),
    phone_number: d.phoneNumber,
    remarks: d.remarks,
    occasion: d.occasion,
    transaction_id: d.transactionId,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  }
}

/** The answer to an STK push (and to its retries): the provider's ids and the current status. */
export function stkAnswer(p: PaymentRow) {
  return {
    checkout_request_id: p.checkoutRequestId ?? p.id,
    merchant_request_id: p.merchantRequestId ?? '',
    status: visible(p.status),
  }
}

/** The answer to a B2C request (and to its retries). */
export function b2cAnswer(d: DisbursementRow) {
  return {
    id: d.id,
    originator_conversation_id: d.id,
    conversation_id: d.conversationId ?? '',
    status: visible(d.status),
  }
}
