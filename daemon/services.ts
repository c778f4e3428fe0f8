import type { ServiceModule, ServiceName } from '../services/kernel/context.ts'
import type { Slices } from './slices.ts'

/**
 * The service modules, loaded lazily so `--only` starts only what it names; each one's `create`
 * takes the settings slice the daemon builds for it.
 */
export const serviceModules: {
  [N in ServiceName]: () => Promise<{ default: ServiceModule<Slices[N]> }>
} = {
  analytics: () => import('../services/analytics/index.ts'),
  auth: () => import('../services/auth/index.ts'),
  tenant: () => import('../services/tenant/index.ts'),
  parser: () => import('../services/parser/index.ts'),
  cashflow: () => import('../services/cashflow/index.ts'),
  payment: () => import('../services/payment/index.ts'),
  billing: () => import('../services/billing/index.ts'),
  categorizer: () => import('../services/categorizer/index.ts'),
  webhook: () => import('../services/webhook/index.ts'),
}

/** Databases that hold money are synced fully on every commit (DESIGN §3). */
export const synchronousOf = (service: string): 'FULL' | 'NORMAL' =>
  service === 'payment' || service === 'billing' ? 'FULL' : 'NORMAL'
