import { defineService } from '../kernel/context.ts'
import { webhookConfig } from './config.ts'
import type { WebhookDeps } from './deps.ts'
import { createDispatcher, type Dispatcher } from './dispatcher.ts'
import { createWebhooksApp } from './routes.ts'
import { subscribeSources } from './sources.ts'
import { cachedResolver, systemResolver } from './ssrf.ts'

export default defineService({
  name: 'webhook',
  create(ctx) {
    let dispatcher: Dispatcher | null = null
    const deps: WebhookDeps = {
      db: ctx.registry.platform('webhook'),
      config: webhookConfig(ctx.settings),
      clock: ctx.clock,
      registry: ctx.registry,
      log: ctx.log,
      resolve: cachedResolver(systemResolver, 5000),
      notify: {
        enqueued: (ids) => dispatcher?.enqueued(ids),
        endpointChanged: (id) => dispatcher?.endpointChanged(id),
      },
    }
    dispatcher = createDispatcher(deps)
    const d = dispatcher
    return {
      app: createWebhooksApp(ctx, deps),
      async start() {
        d.start()
        await subscribeSources(ctx.bus, deps)
      },
      stop: () => d.stop(),
    }
  },
})
