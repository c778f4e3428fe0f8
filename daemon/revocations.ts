import { type AuthRevokedEvent, topics } from '../schema/events.ts'
import type { ApiKeyGrantOut } from '../services/auth/model.ts'
import type { EventBus } from '../services/kernel/bus.ts'
import { PURPOSE_HEADER } from '../services/kernel/entitlements.ts'
import { AppError } from '../services/kernel/errors.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import { retryUntilDone } from '../services/kernel/retry.ts'
import { subscribe } from '../services/kernel/subscribe.ts'
import {
  API_KEY_LOOKUP,
  type ApiKeyResolver,
  type TokenVerifier,
} from '../services/kernel/tokens.ts'
import { untilConnected } from './broker-wait.ts'
import { platformRead } from './platform-sync.ts'
import type { Readiness } from './readiness.ts'

/** Events arrive checked by `subscribe`; the list loaded over HTTP is checked here. */
const apply = (tokens: TokenVerifier, r: Partial<AuthRevokedEvent> | undefined) => {
  if (typeof r?.user_id !== 'string' || typeof r.before !== 'number') return
  tokens.revoke({
    userId: r.user_id,
    sessionId: r.session_id ?? null,
    before: r.before,
    apiKeyId: typeof r.api_key_id === 'string' ? r.api_key_id : undefined,
  })
}

/**
 * How a process without auth checks an API key: it asks auth about the key it was shown
 * (`GET /api/v1/auth/api-keys/current`, the key as the bearer, purpose signed with the hop key,
 * which every process of an install shares). The verifier caches answers for up to 30 s and
 * drops a key at once when its revocation arrives on the topic above.
 */
export function resolveApiKeysOverHttp(client: ServiceClient): ApiKeyResolver {
  return async (key) => {
    try {
      const g = await client.call<typeof ApiKeyGrantOut.static>(
        'auth',
        '/api/v1/auth/api-keys/current',
        {
          token: key,
          headers: { [PURPOSE_HEADER]: API_KEY_LOOKUP },
          deadline: Date.now() + 5_000,
        },
      )
      return {
        id: g.id,
        tenantId: g.tenant_id,
        role: g.role,
        expiresAt: g.expires_at ? Date.parse(g.expires_at) : null,
      }
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return null
      // Auth refusing the lookup itself means this process signs with another hop key.
      if (err instanceof AppError && err.code === 'FORBIDDEN')
        throw new AppError('BAD_GATEWAY', 'auth refused the API key lookup (hop key mismatch?)')
      throw err
    }
  }
}

/**
 * Keeps this process's token verifier told of every revocation: subscribed once to
 * `mobilemoney.auth.revoked` on its own broker session, and, when auth runs elsewhere, loaded
 * from `GET /api/v1/auth/revocations` at start (in the background, retried while auth comes up)
 * so a process started after a removal knows it too. The auth process loads its own table.
 */
export async function followRevocations(opts: {
  tokens: TokenVerifier
  bus: EventBus
  client: ServiceClient
  /** False when auth runs in this process (it feeds the verifier itself). */
  load: boolean
  log: Logger
}): Promise<{ stop(): void }> {
  // Each process has its own broker session, so each is a consumer of its own.
  await subscribe(opts, 'revocations', topics.authRevoked, (event) =>
    apply(opts.tokens, event.data),
  )
  let stopped = false
  if (opts.load) {
    void retryUntilDone(
      async () => {
        const list = await platformRead<{ data: AuthRevokedEvent[] }>(
          opts.client,
          'auth',
          '/api/v1/auth/revocations',
        )
        for (const r of list.data) apply(opts.tokens, r)
      },
      {
        waiting: 'waiting for auth to load the token revocations',
        log: opts.log,
        logEvery: 10,
        attempts: 60,
        stopped: () => stopped,
      },
    )
  }
  return {
    stop() {
      stopped = true
    },
  }
}

/**
 * This process's own broker session and its revocation feed (`followRevocations`), connected in
 * the background as long as the broker takes to answer: `/health` says the broker is warming up
 * meanwhile, and the standby's outbox notices go out on it once it is up.
 */
export async function startRevocationFeed(opts: {
  bus: EventBus
  brokerUrl: string
  tokens: TokenVerifier
  client: ServiceClient
  load: boolean
  log: Logger
  readiness: Readiness
  sessions: { keep(bus: EventBus, clientId: string): void }
  notices: { attach(bus: EventBus): void }
  clientId: string
  stopped: () => boolean
}): Promise<{ bus: EventBus; stop(): void }> {
  const { bus, log, readiness } = opts
  opts.sessions.keep(bus, opts.clientId)
  const feed = await followRevocations(opts)
  opts.notices.attach(bus)
  readiness.warming('broker', `connecting to ${opts.brokerUrl.replace(/\/\/[^@/]*@/, '//')}`)
  void untilConnected(() => bus.ready?.() ?? Promise.resolve(), {
    log,
    what: 'token revocations',
    stopped: opts.stopped,
  }).then((connected) => connected && readiness.warmed('broker'))
  return { bus, stop: () => feed.stop() }
}
