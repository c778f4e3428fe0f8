import { defineService } from '../kernel/context.ts'
import { createCategorizerApp } from './routes.ts'

export default defineService({
  name: 'categorizer',
  create: (ctx) => ({ app: createCategorizerApp(ctx) }),
})
