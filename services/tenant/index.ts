import { defineService } from '../kernel/context.ts'
import { createTenantsApp } from './routes.ts'

export default defineService({
  name: 'tenant',
  create: (ctx) => ({ app: createTenantsApp(ctx) }),
})
