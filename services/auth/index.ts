import { defineService } from '../kernel/context.ts'
import type { Revocation } from '../kernel/tokens.ts'
import { resolveApiKey } from './api-keys.ts'
import { createIssuer } from './issue.ts'
import { currentRevocations } from './revocations.ts'
import { createAuthApp } from './routes.ts'
import { bootstrapOperator } from './service.ts'
import type { AuthSettings } from './settings.ts'
import { createLoginThrottle } from './throttle.ts'

export default defineService<AuthSettings>({
  name: 'auth',
  async create(ctx) {
    const s = ctx.settings
    const privateKeyPem = s.jwtPrivatePem
    if (!privateKeyPem)
      throw new Error('the auth service needs the JWT private key (run `mmp init`)')
    const db = ctx.registry.platform('auth')
    const deps = {
      db,
      registry: ctx.registry,
      throttle: createLoginThrottle(db, {
        maxPerIp: s.login.maxFailures,
        maxPerEmail: s.login.maxPerEmail,
        windowMs: s.login.windowS * 1000,
      }),
      clock: ctx.clock,
      log: ctx.log,
      refreshTtlSeconds: s.refreshTtlS,
      inviteTtlSeconds: 7 * 86400,
      publicUrl: s.publicUrl,
      revokeLocally: (r: Revocation) => ctx.tokens.revoke(r),
      keepSeconds: s.accessTtlS + s.clockToleranceS,
      issuer: await createIssuer({
        privateKeyPem,
        issuer: s.issuer,
        audience: s.audience,
        ttlSeconds: s.accessTtlS,
        now: () => ctx.clock.nowMs(),
      }),
    }
    await bootstrapOperator(deps, { ...s.operator, dataDir: s.dataDir })
    // This process's verifier knows every live revocation before the first request.
    for (const r of currentRevocations(deps))
      ctx.tokens.revoke({ userId: r.user_id, sessionId: r.session_id, before: r.before })
    // Keys are looked up in this database directly; other processes ask this one over HTTP.
    ctx.tokens.resolveApiKeysWith(async (key) => resolveApiKey(deps, key))
    return { app: await createAuthApp(ctx, deps, s.jwtPublicPem) }
  },
})
