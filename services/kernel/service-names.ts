/** The services of the platform (DESIGN §1), by the names discovery and the daemon use. */
export const serviceNames = [
  'analytics',
  'auth',
  'tenant',
  'parser',
  'cashflow',
  'payment',
  'billing',
  'categorizer',
  'webhook',
] as const
export type ServiceName = (typeof serviceNames)[number]
