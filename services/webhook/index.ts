import { type Checkpointer, startCheckpointer } from '../kernel/checkpointer.ts'
import { defineService } from '../kernel/context.ts'
import { subscribeSources } from './consumers.ts'
import type { WebhookDeps } from './deps.ts'
import { createDispatcher, type Dispatcher } from './dispatcher.ts'
import { sealClearSecrets } from './endpoint-secrets.ts'
import { createWebhooksApp } from './routes.ts'
import { createSecretBox, parseBoxKey } from './secret-box.ts'
import { type WebhookSettings, webhookConfig } from './settings.ts'
import { cachedResolver, systemResolver } from './ssrf.ts'

export default defineService<WebhookSettings>({
  name: 'webhook',
  create(ctx) {
    const key = ctx.settings.secretKey
    if (!key)
      throw new Error(
        'the webhook service needs its secret key (run `mmp init` or set MMP_WEBHOOK_SECRET_KEY)',
      )
    let dispatcher: Dispatcher | null = null
    const deps: WebhookDeps = {
      db: ctx.registry.platform('webhook'),
      config: webhookConfig(ctx.settings),
      clock: ctx.clock,
      registry: ctx.registry,
      log: ctx.log,
      resolve: cachedResolver(systemResolver, 5000),
      secrets: createSecretBox(parseBoxKey(key)),
      notify: {
        enqueued: (ids) => dispatcher?.enqueued(ids),
        endpointChanged: (id) => dispatcher?.endpointChanged(id),
      },
    }
    const sealed = sealClearSecrets(deps)
    if (sealed)
      ctx.log.info('encrypted webhook signing secrets stored in clear', { endpoints: sealed })
    dispatcher = createDispatcher(deps)
    const d = dispatcher
    let checkpointer: Checkpointer | null = null
    return {
      app: createWebhooksApp(ctx, deps),
      async start() {
        checkpointer = startCheckpointer(deps.db, { name: 'the webhook queue', log: ctx.log })
        d.start()
        await subscribeSources(ctx.bus, deps, ctx.ownership)
      },
      async stop() {
        await d.stop()
        await checkpointer?.stop()
      },
    }
  },
})
