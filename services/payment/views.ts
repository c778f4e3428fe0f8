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
    checkout_request_id: p.checkout_request_id ?? p.id,
    merchant_request_id: p.merchant_request_id,
    status: visible(p.status),
    result_code: p.result_code,
    result_desc: p.result_desc,
    result_message: resultMessage(p),
    mpesa_receipt_number: p.mpesa_receipt_number,
    amount: toMajor(p.amount_cents),
    phone_number: p.phone_number,
    account_reference: p.account_reference,
    transaction_desc: p.transaction_desc,
    transaction_id: p.transaction_id,
    created_at: p.created_at,
    updated_at: p.updated_at,
  }
}

export function disbursementView(d: DisbursementRow) {
  return {
    id: d.id,
    originator_conversation_id: d.id,
    conversation_id: d.conversation_id,
    status: visible(d.status),
    result_code: d.result_code,
    result_desc: d.result_desc,
    transaction_receipt: d.transaction_receipt,
    receiver_name: d.receiver_name,
    amount: toMajor(d.amount_cents),
    phone_number: d.phone_number,
    remarks: d.remarks,
    occasion: d.occasion,
    transaction_id: d.transaction_id,
    created_at: d.created_at,
    updated_at: d.updated_at,
  }
}

/** The answer to an STK push (and to its retries): the provider's ids and the current status. */
export function stkAnswer(p: PaymentRow) {
  return {
    checkout_request_id: p.checkout_request_id ?? p.id,
    merchant_request_id: p.merchant_request_id ?? '',
    status: visible(p.status),
  }
}

/** The answer to a B2C request (and to its retries). */
export function b2cAnswer(d: DisbursementRow) {
  return {
    id: d.id,
    originator_conversation_id: d.id,
    conversation_id: d.conversation_id ?? '',
    status: visible(d.status),
  }
}
