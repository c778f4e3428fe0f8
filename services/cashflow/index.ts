import { topics } from '../../schema/events.ts'
import { defineService, type NoSettings } from '../kernel/context.ts'
import {
  subscribeCategorized,
  subscribeReportedBalance,
  subscribeStatementsProcessed,
} from './consumers.ts'
import { createCashflowApp } from './routes.ts'

export default defineService<NoSettings>({
  name: 'cashflow',
  create: (ctx) => ({
    app: createCashflowApp(ctx),
    async start() {
      await subscribeCategorized(ctx, topics.transactionsCategorized)
      await subscribeReportedBalance(ctx, topics.balanceReported)
      await subscribeStatementsProcessed(ctx, topics.statementsProcessed)
    },
  }),
})
