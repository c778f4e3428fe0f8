import { importPKCS8, SignJWT } from 'jose'
import { type AuthRevokedEvent, topics } from '../schema/events.ts'
import type { EventBus } from '../services/kernel/bus.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import { subscribe } from '../services/kernel/subscribe.ts'
import { TOKEN_ALGORITHM, type TokenVerifier } from '../services/kernel/tokens.ts'

/** Events arrive checked by `subscribe`; the list loaded over HTTP is checked here. */
const apply = (tokens: TokenVerifier, r: Partial<AuthRevokedEvent> | undefined) => {
  if (typeof r?.user_id !== 'string' || typeof r.before !== 'number') return
  tokens.revoke({ userId: r.user_id, sessionId: r.session_id ?? null, before: r.before })
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
  /** Signs the short-lived operator token the list needs; without it only the topic is used. */
  privateKeyPem: string | null
  issuer: string
  audience: string
  log: Logger
}): Promise<{ stop(): void }> {
  // Each process has its own broker session, so each is a consumer of its own.
  await subscribe(opts, 'revocations', topics.authRevoked, (event) =>
    apply(opts.tokens, event.data),
  )
  let stopped = false
  if (opts.load && opts.privateKeyPem) {
    const key = await importPKCS8(opts.privateKeyPem, TOKEN_ALGORITHM)
    void (async () => {
      for (let attempt = 1; !stopped && attempt <= 60; attempt++) {
        try {
          const iat = Math.floor(Date.now() / 1000)
          const token = await new SignJWT({ tenant_id: 'platform', role: 'Admin' })
            .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: 'JWT' })
            .setIssuer(opts.issuer)
            .setAudience(opts.audience)
            .setSubject('usr_mmp_process')
            .setIssuedAt(iat)
            .setExpirationTime(iat + 60)
            .sign(key)
          const list = await opts.client.call<{ data: AuthRevokedEvent[] }>(
            'auth',
            '/api/v1/auth/revocations',
            { token },
          )
          for (const r of list.data) apply(opts.tokens, r)
          opts.tokens.forget(token)
          return
        } catch (err) {
          if (attempt === 1 || attempt % 10 === 0)
            opts.log.info('waiting for auth to load the token revocations', {
              attempt,
              error: (err as Error).message,
            })
          await Bun.sleep(500)
        }
      }
    })()
  } else if (opts.load) {
    opts.log.warn('no JWT private key here: token revocations come from the broker only')
  }
  return {
    stop() {
      stopped = true
    },
  }
}
