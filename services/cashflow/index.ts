import { topics } from '../../schema/events.ts'
import { defineService, type NoSettings } from '../kernel/context.ts'
import { subscribeCategorized } from './events.ts'
import { createCashflowApp } from './routes.ts'

export default defineService<NoSettings>({
  name: 'cashflow',
  create: (ctx) => ({
    app: createCashflowApp(ctx),
    start: () => subscribeCategorized(ctx, topics.transactionsCategorized),
  }),
})
