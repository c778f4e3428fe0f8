/**
 * What the payment service offers outside the service (the CLI): checking the hash-chained audit
 * trail of a payment database file. Commands import this module, never the service's internals.
 */
export { verifyAuditFile } from './audit.ts'
