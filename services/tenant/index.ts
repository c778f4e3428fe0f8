import { topics } from '../../schema/events.ts'
import { defineService } from '../kernel/context.ts'
import { applySubscriptionChange, resumeMoves } from './plan.ts'
import { createTenantsApp } from './routes.ts'

export default defineService({
  name: 'tenant',
  create: (ctx) => ({
    app: createTenantsApp(ctx),
    async start() {
      resumeMoves(ctx)
      await ctx.bus.subscribe(topics.subscriptionsChanged, (event) =>
        applySubscriptionChange(ctx, event),
      )
    },
  }),
})
