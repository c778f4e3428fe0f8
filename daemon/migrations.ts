import { migrations as analytics } from '../schema/analytics/migrations.ts'
import { migrations as auth } from '../schema/auth/migrations.ts'
import { migrations as billing } from '../schema/billing/migrations.ts'
import { migrations as cashflow } from '../schema/cashflow/migrations.ts'
import { migrations as categorizer } from '../schema/categorizer/migrations.ts'
import { migrations as parser } from '../schema/parser/migrations.ts'
import { migrations as payment } from '../schema/payment/migrations.ts'
import { migrations as tenant } from '../schema/tenant/migrations.ts'
import { migrations as webhook } from '../schema/webhook/migrations.ts'
import type { Migration } from '../services/kernel/db.ts'

/** Every service's migrations, imported as text so they travel inside `dist/mmp`. */
export const migrationsByService: Record<string, readonly Migration[]> = {
  analytics,
  auth,
  billing,
  cashflow,
  categorizer,
  parser,
  payment,
  tenant,
  webhook,
}

export function migrationsOf(service: string): readonly Migration[] {
  const m = migrationsByService[service]
  if (!m) throw new Error(`no migrations for service ${service}`)
  return m
}
