import { defineService } from '../kernel/context.ts'
import { createParserApp } from './routes.ts'

export default defineService({
  name: 'parser',
  create: (ctx) => ({ app: createParserApp(ctx) }),
})
