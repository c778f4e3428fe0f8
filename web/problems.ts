import type { ErrorCode } from '../schema/errors.ts'

/**
 * Every problem the platform can answer, in the owner's words: what happened and what to do.
 * Keyed by the `code` of the problem+json body (schema/errors.ts); a new code without a sentence
 * fails to compile here and fails web/problems.test.ts.
 */
export const OWNER_WORDS: Record<ErrorCode, string> = {
  VALIDATION_FAILED: 'Something you entered is not right. Correct the fields below and try again.',
  MALFORMED_BODY:
    'mmp could not read what the page sent. Reload the page and try again; if it happens again, tell your administrator.',
  BAD_REQUEST:
    'mmp could not do this as asked. Check what you entered and try again; if it happens again, tell your administrator.',
  UNAUTHENTICATED:
    'You are not signed in, or the email or password is wrong. Check them and sign in again.',
  INVALID_SIGNATURE:
    'The message was not signed as expected, so mmp ignored it. Check the signing secret and send it again.',
  FORBIDDEN:
    'Your role does not allow this. Ask an Admin of your business to do it, or to give you a role that can.',
  TENANT_MISMATCH:
    'This belongs to another business on mmp. Sign in to that business to see it, or pick your own.',
  NOT_FOUND:
    'mmp could not find this: it may have been removed, or the link is wrong. Go back and pick it again from the list.',
  METHOD_NOT_ALLOWED:
    'This action is not available here. Reload the page; if it happens again, tell your administrator.',
  TENANT_NOT_FOUND:
    'This business is not on mmp (or no longer). Check the name, or ask the platform operator.',
  TENANT_ELSEWHERE:
    'This business is served by another mmp server just now. Wait a moment and try again.',
  CONFLICT:
    'This clashes with something that already exists (the same name, number or receipt). Change it, or use the existing one.',
  IDEMPOTENCY_KEY_REUSED:
    'This looks like a repeat of an earlier request with different details. Fill the form in again and send it once.',
  IDEMPOTENCY_IN_PROGRESS:
    'The same request is still being handled. Wait a few seconds, then check the list before sending it again.',
  PHONE_BUSY:
    'This phone already has an M-PESA prompt open. Wait for the customer to answer it (or about a minute), then send the new one.',
  LIMIT_EXCEEDED:
    'Your plan’s limit is reached. Upgrade the plan in Settings, or wait for the next billing period.',
  SUBSCRIPTION_SUSPENDED:
    'Your subscription is suspended, so changes are paused. Pay the open invoice in Settings to carry on.',
  FEATURE_DISABLED: 'Your plan does not include this. Upgrade the plan in Settings to use it.',
  STATEMENT_PASSWORD_REQUIRED:
    'This statement is locked with a password. Type the password (Safaricom sends it with the statement, often your ID number) and upload it again.',
  STATEMENT_PASSWORD_INCORRECT:
    'That password does not open this statement. Check it (it is often your ID number) and upload again.',
  STATEMENT_TOO_LARGE:
    'This statement is too large to read in one go. Download a shorter period (a few months) and upload each part.',
  STATEMENT_UNREADABLE:
    'mmp cannot read this file as an M-PESA statement. Upload the PDF, CSV or Excel statement exactly as Safaricom sent it (not a photo or a screenshot).',
  C2B_OUT_OF_RANGE:
    'M-PESA reported a till or paybill payment with an amount or time mmp cannot accept, so it was refused. Check the payment in the M-PESA portal; if it is genuine, import your statement to record it.',
  PAYLOAD_TOO_LARGE:
    'This file is too large. Upload a smaller file (a statement of fewer months), or split it.',
  URI_TOO_LONG: 'The search is too long. Use fewer or shorter filters and try again.',
  HEADERS_TOO_LARGE:
    'The request carried too much (often too many cookies). Sign out and in again, or clear this site’s cookies, and try again.',
  RATE_LIMITED: 'Too many requests at once. Wait a minute and try again.',
  BAD_GATEWAY:
    'M-PESA or another service mmp relies on did not answer properly. Wait a minute and try again.',
  PROVIDER_MISCONFIGURED:
    'M-PESA refused mmp’s own settings (its keys or business number), so nothing was charged. Tell the platform operator to check the M-PESA settings.',
  SERVICE_UNAVAILABLE: 'mmp is busy or restarting. Wait a minute and try again.',
  STORAGE_UNAVAILABLE:
    'mmp cannot reach its storage just now; nothing was changed. Wait a minute and try again.',
  STORAGE_FULL:
    'mmp’s disk is full, so nothing was saved. Tell your administrator to free space, then try again.',
  TIMEOUT: 'This took too long and was stopped. Try again; for a long period, pick a shorter one.',
  INTERNAL:
    'Something went wrong inside mmp; nothing you did caused it. Try again, and if it keeps happening tell your administrator the reference below.',
}

/** Words for a problem without a code (an old server, a proxy), by its HTTP status. */
function byStatus(status: number | undefined): string {
  if (!status) return 'mmp could not be reached. Check your internet connection and try again.'
  if (status === 401) return OWNER_WORDS.UNAUTHENTICATED
  if (status === 403) return OWNER_WORDS.FORBIDDEN
  if (status === 404) return OWNER_WORDS.NOT_FOUND
  if (status === 409) return OWNER_WORDS.CONFLICT
  if (status === 413) return OWNER_WORDS.PAYLOAD_TOO_LARGE
  if (status === 422) return OWNER_WORDS.VALIDATION_FAILED
  if (status === 429) return OWNER_WORDS.RATE_LIMITED
  if (status === 504) return OWNER_WORDS.TIMEOUT
  if (status >= 500) return OWNER_WORDS.SERVICE_UNAVAILABLE
  return OWNER_WORDS.BAD_REQUEST
}

/** The headline sentence for a problem: by its code, else by its status. */
export function ownerSentence(code: string | undefined, status: number | undefined): string {
  return (code && OWNER_WORDS[code as ErrorCode]) || byStatus(status)
}

/** Field names as the forms label them. */
const FIELD_WORDS: Record<string, string> = {
  phone_number: 'Phone',
  phone: 'Phone',
  amount: 'Amount',
  account_reference: 'Reference',
  transaction_desc: 'Description',
  email: 'Email',
  password: 'Password',
  url: 'URL',
  events: 'Events',
  shortcode: 'Till or paybill number',
  pattern: 'Pattern',
  from: 'From',
  to: 'To',
  file: 'File',
  role: 'Role',
  name: 'Name',
}

/** A schema's own wording: regular expressions, type names, "Expected …". */
const TECHNICAL = /`|Expected|match|regex|pattern|\^|\$|\\[dws]|must be (?:string|number|integer)/i

/** The API's detail when it reads as words (shown under Reference), or null for a schema's. */
export const plainDetail = (detail: string) => (TECHNICAL.test(detail) ? null : detail)

/**
 * One field problem in plain words: the field as the form labels it, and instead of a schema's
 * wording (a regular expression, "Expected string…") what the field wants.
 */
export function fieldSentence(field: string, message: string): string {
  const name = field.replace(/^\/?body\/?|^\//, '').replace(/\//g, ' ')
  const label = FIELD_WORDS[name] ?? (name ? name.replace(/_/g, ' ') : 'A field')
  if (!TECHNICAL.test(message)) return `${label}: ${message}`
  if (/phone/.test(name))
    return `${label}: type a Kenyan M-PESA number, such as 0712 345 678 or 254712345678.`
  if (/amount/.test(name)) return `${label}: type a whole number of shillings, such as 150.`
  if (/email/.test(name)) return `${label}: type an email address, such as owner@example.com.`
  if (/shortcode/.test(name)) return `${label}: type the 5 to 7 digits of your till or paybill.`
  if (/url/.test(name)) return `${label}: type a full web address starting with https://.`
  if (/from|to|date/.test(name)) return `${label}: pick a date.`
  return `${label}: this is not in the expected form; check it and try again.`
}
