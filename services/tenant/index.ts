import { topics } from '../../schema/events.ts'
import { defineService, type NoSettings } from '../kernel/context.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { resumeHandoffs } from './instance-resume.ts'
import { resumeMoves } from './plan-resume.ts'
import { createTenantsApp } from './routes.ts'
import { applySubscriptionChange } from './upgrade.ts'

export default defineService<NoSettings>({
  name: 'tenant',
  create: (ctx) => {
    let stopped = false
    return {
      app: createTenantsApp(ctx),
      async start() {
        resumeMoves(ctx)
        await subscribe(ctx, 'tenant', topics.subscriptionsChanged, (event) =>
          applySubscriptionChange(ctx, event),
        )
        // In the background: the instances it asks may still be starting.
        void resumeHandoffs(ctx, { stopped: () => stopped })
      },
      stop() {
        stopped = true
      },
    }
  },
})
