/**
 * What the payment service offers outside the service (the CLI): checking the hash-chained audit
 * trail of a payment database file. Commands import this module, never the service's internals.
 */

/** Phone numbers as people type them, in Daraja's form (the CLI checks them before sending). */
export { normalizePhone, PHONE_FORMATS } from '../kernel/phone.ts'
export { verifyAuditFile } from './audit.ts'
