import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The categorizer service's HTTP controller. */
export function createCategorizerApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Categorizer' })
}
