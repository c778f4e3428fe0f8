import { type TransactionBatch, topics } from '../../schema/events.ts'
import { defineService } from '../kernel/context.ts'
import { consumeTransactions } from './consume.ts'
import { createCategorizerApp } from './routes.ts'
import { createTenantStates } from './state.ts'

export default defineService({
  name: 'categorizer',
  create: (ctx) => {
    const states = createTenantStates(ctx)
    return {
      app: createCategorizerApp(ctx, states),
      async start() {
        await ctx.bus.subscribe(topics.transactionsRaw, (event) => {
          const batch = event.data as Partial<TransactionBatch>
          consumeTransactions(
            ctx,
            states,
            event,
            Array.isArray(batch.transactions) ? batch.transactions : [],
          )
        })
        await ctx.bus.subscribe(topics.transactionsSuccess, (event) => {
          // A tenant paying the platform's invoice is billing's business, not the tenant's income.
          if ((event.data as { purpose?: string }).purpose === 'invoice') return
          consumeTransactions(ctx, states, event, [event.data])
        })
      },
    }
  },
})
