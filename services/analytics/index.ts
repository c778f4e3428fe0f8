import { defineService, type NoSettings } from '../kernel/context.ts'
import { stopCheckpointers } from './checkpoints.ts'
import { subscribeTransactions } from './consumers.ts'
import { createAnalyticsApp } from './routes.ts'

export default defineService<NoSettings>({
  name: 'analytics',
  create: (ctx) => ({
    app: createAnalyticsApp(ctx),
    start: () => subscribeTransactions(ctx),
    stop: () => stopCheckpointers(ctx),
  }),
})
