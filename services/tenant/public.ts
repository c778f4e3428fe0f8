/**
 * What the tenant service offers outside the service (the CLI): the shapes of a tenant and of a
 * long operator job as the API answers them. Commands import this module, never the internals.
 */
export type { Job } from './jobs.ts'
export type { BackupWritten, TenantView } from './model.ts'
