import { defineService } from '../kernel/context.ts'
import { createCashflowApp } from './routes.ts'

export default defineService({
  name: 'cashflow',
  create: (ctx) => ({ app: createCashflowApp(ctx) }),
})
