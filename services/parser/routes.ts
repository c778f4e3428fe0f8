import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The parser service's HTTP controller. */
export function createParserApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Parser' })
}
