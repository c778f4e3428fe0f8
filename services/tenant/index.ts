import { defineService } from '../kernel/context.ts'
import { subscribeTenant } from './consumers.ts'
import { resumeHandoffs } from './instance-resume.ts'
import { resumeMoves } from './plan-resume.ts'
import { createTenantsApp } from './routes.ts'
import type { TenantSettings } from './settings.ts'

export default defineService<TenantSettings>({
  name: 'tenant',
  create: (ctx) => {
    let stopped = false
    return {
      app: createTenantsApp(ctx, ctx.settings),
      async start() {
        resumeMoves(ctx)
        await subscribeTenant(ctx)
        // In the background: the instances it asks may still be starting.
        void resumeHandoffs(ctx, { stopped: () => stopped })
      },
      stop() {
        stopped = true
      },
    }
  },
})
