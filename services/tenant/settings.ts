import type { BackupWritten } from './model.ts'

/** What a backup run wrote: the folder, its size and what it holds (`POST /api/v1/backups`). */
export type WrittenBackup = BackupWritten

/** The tenant service's settings slice (daemon/slices.ts). */
export interface TenantSettings {
  /**
   * Writes one backup into the configured backup folder (`backup.dir`) and prunes past
   * `backup.keep`: the daemon's scheduled run, handed over so the service need not know the data
   * dir's layout. Absent on a part that cannot take one.
   */
  backup?: () => Promise<WrittenBackup>
}
