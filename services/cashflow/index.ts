import { topics } from '../../schema/events.ts'
import { defineService } from '../kernel/context.ts'
import { subscribeCategorized } from './events.ts'
import { createCashflowApp } from './routes.ts'

export default defineService({
  name: 'cashflow',
  create: (ctx) => ({
    app: createCashflowApp(ctx),
    start: () => subscribeCategorized(ctx, topics.transactionsCategorized),
  }),
})
