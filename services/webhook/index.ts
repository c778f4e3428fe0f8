import { defineService } from '../kernel/context.ts'
import { createWebhooksApp } from './routes.ts'

export default defineService({
  name: 'webhook',
  create: (ctx) => ({ app: createWebhooksApp(ctx) }),
})
