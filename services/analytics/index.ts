import { defineService } from '../kernel/context.ts'
import { subscribeTransactions } from './events.ts'
import { createAnalyticsApp } from './routes.ts'

export default defineService({
  name: 'analytics',
  create: (ctx) => ({
    app: createAnalyticsApp(ctx),
    start: () => subscribeTransactions(ctx),
  }),
})
