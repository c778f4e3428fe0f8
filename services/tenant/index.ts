import { topics } from '../../schema/events.ts'
import { defineService, type NoSettings } from '../kernel/context.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { resumeMoves } from './plan.ts'
import { createTenantsApp } from './routes.ts'
import { applySubscriptionChange } from './upgrade.ts'

export default defineService<NoSettings>({
  name: 'tenant',
  create: (ctx) => ({
    app: createTenantsApp(ctx),
    async start() {
      resumeMoves(ctx)
      await subscribe(ctx, 'tenant', topics.subscriptionsChanged, (event) =>
        applySubscriptionChange(ctx, event),
      )
    },
  }),
})
