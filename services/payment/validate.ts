import { type FieldError, ValidationError } from '../kernel/errors.ts'

/** Daraja's own limits, checked up front with a clear 422 (DESIGN §8). */
const PHONE = /^254[17]\d{8}$/
const MAX_AMOUNT = 250_000

export interface StkPushBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  account_reference: string
  transaction_desc: string
}

export interface B2CBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  remarks: string
  occasion?: string | undefined
}

function checkPhone(errors: FieldError[], field: string, v: unknown) {
  if (typeof v !== 'string' || !PHONE.test(v))
    errors.push({ field, message: 'must be a Kenyan mobile number 2547XXXXXXXX or 2541XXXXXXXX' })
}

function checkWholeShillings(errors: FieldError[], field: string, v: unknown): number {
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

function checkText(errors: FieldError[], field: string, v: unknown, max: number, min = 1) {
  if (typeof v !== 'string') errors.push({ field, message: 'must be a string' })
  else if (v.trim().length < min) errors.push({ field, message: 'must not be empty' })
  else if (v.length > max) errors.push({ field, message: `must be at most ${max} characters` })
}

function throwIfAny(errors: FieldError[]) {
  if (errors.length)
    throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors)
}

/** Validates an STK push request; returns the amount in whole shillings. */
export function validateStkPush(body: StkPushBody): number {
  const errors: FieldError[] = []
  checkPhone(errors, 'phone_number', body.phone_number)
  const amount = checkWholeShillings(errors, 'amount', body.amount)
  checkText(errors, 'account_reference', body.account_reference, 12)
  checkText(errors, 'transaction_desc', body.transaction_desc, 13)
  throwIfAny(errors)
  return amount
}

/** Validates a B2C request; returns the amount in whole shillings. */
export function validateB2C(body: B2CBody): number {
  const errors: FieldError[] = []
  checkPhone(errors, 'phone_number', body.phone_number)
  const amount = checkWholeShillings(errors, 'amount', body.amount)
  checkText(errors, 'remarks', body.remarks, 100, 2)
  if (body.occasion !== undefined && body.occasion !== null)
    checkText(errors, 'occasion', body.occasion, 100, 0)
  throwIfAny(errors)
  return amount
}
