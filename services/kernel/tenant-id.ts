/** Tenant ids (a slug that becomes a folder name), declared in schema/tenant-id.ts. */
export * from '../../schema/tenant-id.ts'
