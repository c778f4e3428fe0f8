import { defineService } from '../kernel/context.ts'
import { createPaymentsApp } from './routes.ts'

export default defineService({
  name: 'payment',
  create: (ctx) => ({ app: createPaymentsApp(ctx) }),
})
