import { type FieldError, ValidationError } from '../kernel/errors.ts'
import { normalizePhone, PHONE_FORMATS } from '../kernel/phone.ts'

/** Daraja's own limits, checked up front with a clear 422 (DESIGN §8). */
const MAX_AMOUNT = 250_000

export interface StkPushBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  account_reference: string
  /** Optional at Daraja ("All fields apart from TransactionDesc are mandatory"). */
  transaction_desc?: string | undefined
}

/** The TransactionDesc sent when the caller gives none. */
export const DEFAULT_TRANSACTION_DESC = 'Payment'

export interface B2CBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  remarks: string
  occasion?: string | undefined
}

/** The phone in Daraja's form (`2547…`/`2541…`), or '' with an error naming the forms taken. */
export function checkPhone(errors: FieldError[], field: string, v: unknown): string {
  const phone = normalizePhone(v)
  if (!phone) errors.push({ field, message: `must be a Kenyan mobile number: ${PHONE_FORMATS}` })
  return phone ?? ''
}

export function checkWholeShillings(errors: FieldError[], field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    errors.push({ field, message: 'must be a number' })
    return 0
  }
  if (!Number.isInteger(v)) {
    errors.push({ field, message: 'must be a whole number of shillings (M-Pesa takes no cents)' })
    return 0
  }
  if (v < 1) errors.push({ field, message: 'must be at least 1' })
  else if (v > MAX_AMOUNT) errors.push({ field, message: `must be at most ${MAX_AMOUNT}` })
  return v
}

export function checkText(
  errors: FieldError[],
  field: string,
  v: unknown,
  { max, min = 1 }: { max: number; min?: number },
) {
  if (typeof v !== 'string') errors.push({ field, message: 'must be a string' })
  else if (v.trim().length < min) errors.push({ field, message: 'must not be empty' })
  else if (v.length > max) errors.push({ field, message: `must be at most ${max} characters` })
}

export function throwIfAny(errors: FieldError[]) {
  if (errors.length)
    throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors)
}

/**
 * Validates an STK push request; returns it with the phone in Daraja's form and the amount in
 * whole shillings.
 */
export function validateStkPush(body: StkPushBody): StkPushBody & { transaction_desc: string } {
  const errors: FieldError[] = []
  const phone_number = checkPhone(errors, 'phone_number', body.phone_number)
  const amount = checkWholeShillings(errors, 'amount', body.amount)
  checkText(errors, 'account_reference', body.account_reference, { max: 12 })
  const transaction_desc = body.transaction_desc ?? DEFAULT_TRANSACTION_DESC
  checkText(errors, 'transaction_desc', transaction_desc, { max: 13 })
  throwIfAny(errors)
  return { ...body, phone_number, amount, transaction_desc }
}

/** Validates a B2C request; returns it with the phone in Daraja's form. */
export function validateB2C(body: B2CBody): B2CBody {
  const errors: FieldError[] = []
  const phone_number = checkPhone(errors, 'phone_number', body.phone_number)
  const amount = checkWholeShillings(errors, 'amount', body.amount)
  checkText(errors, 'remarks', body.remarks, { max: 100, min: 2 })
  if (body.occasion !== undefined && body.occasion !== null)
    checkText(errors, 'occasion', body.occasion, { max: 100, min: 0 })
  throwIfAny(errors)
  return { ...body, phone_number, amount }
}

export interface SimulateC2bBody {
  shortcode: string
  amount: number
  phone_number: string
  account?: string | undefined
  command_id?: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline' | undefined
}

/** Validates a simulated customer payment; returns what the simulate call sends. */
export function validateSimulateC2b(body: SimulateC2bBody) {
  const errors: FieldError[] = []
  const msisdn = checkPhone(errors, 'phone_number', body.phone_number)
  const amount = checkWholeShillings(errors, 'amount', body.amount)
  if (!/^\d{5,7}$/.test(String(body.shortcode ?? '')))
    errors.push({ field: 'shortcode', message: 'must be a paybill or till number (5 to 7 digits)' })
  if (body.account !== undefined) checkText(errors, 'account', body.account, { max: 20, min: 0 })
  throwIfAny(errors)
  const commandId =
    body.command_id ?? (body.account ? 'CustomerPayBillOnline' : 'CustomerBuyGoodsOnline')
  return {
    shortcode: String(body.shortcode),
    commandId,
    amount,
    msisdn,
    billRefNumber: commandId === 'CustomerBuyGoodsOnline' ? '' : (body.account ?? ''),
  } as const
}
