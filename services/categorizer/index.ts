import { defineService, type NoSettings } from '../kernel/context.ts'
import { subscribeCategorizer } from './consumers.ts'
import { createCategorizerApp } from './routes.ts'
import { createTenantStates } from './state.ts'

export default defineService<NoSettings>({
  name: 'categorizer',
  create: (ctx) => {
    const states = createTenantStates(ctx)
    return {
      app: createCategorizerApp(ctx, states),
      async start() {
        await subscribeCategorizer(ctx, states)
      },
    }
  },
})
