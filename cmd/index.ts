import type { CommandDef } from 'citty'

type Lazy = () => Promise<CommandDef<any>>
const lazy =
  (load: () => Promise<{ default: CommandDef<any> }>): Lazy =>
  () =>
    load().then((m) => m.default)

/** Subcommand name → lazily imported citty command (one per file). */
export const commands: Record<string, Lazy> = {
  serve: lazy(() => import('./serve.ts')),
  init: lazy(() => import('./init.ts')),
  migrate: lazy(() => import('./migrate.ts')),
  version: lazy(() => import('./version.ts')),
  billing: lazy(() => import('./billing.ts')),
  tenant: lazy(() => import('./tenant.ts')),
  user: lazy(() => import('./user.ts')),
  apikey: lazy(() => import('./apikey.ts')),
  import: lazy(() => import('./import.ts')),
  imports: lazy(() => import('./imports.ts')),
  demo: lazy(() => import('./demo.ts')),
  payments: lazy(() => import('./payments.ts')),
  audit: lazy(() => import('./audit.ts')),
  replay: lazy(() => import('./replay.ts')),
  backup: lazy(() => import('./backup.ts')),
  restore: lazy(() => import('./restore.ts')),
  doctor: lazy(() => import('./doctor.ts')),
}
