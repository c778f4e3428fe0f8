import { defineService } from '../kernel/context.ts'
import { createBillingApp } from './routes.ts'

export default defineService({
  name: 'billing',
  create: (ctx) => ({ app: createBillingApp(ctx) }),
})
