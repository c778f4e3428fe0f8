import { defineService } from '../kernel/context.ts'
import { createTenantsApp } from './routes.ts'
import { resumeMoves } from './service.ts'

export default defineService({
  name: 'tenant',
  create: (ctx) => ({
    app: createTenantsApp(ctx),
    start() {
      resumeMoves(ctx)
    },
  }),
})
