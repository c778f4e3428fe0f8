/**
 * SQLite databases with the platform's pragmas. The storage layer (tenants/) owns them; services
 * reach them through this kernel module.
 */
export * from '../../tenants/db.ts'
