import { defineService } from '../kernel/context.ts'
import type { Revocation } from '../kernel/tokens.ts'
import { createIssuer } from './issue.ts'
import { currentRevocations } from './revocations.ts'
import { createAuthApp } from './routes.ts'
import { bootstrapOperator } from './service.ts'
import { createLoginThrottle } from './throttle.ts'

export default defineService({
  name: 'auth',
  async create(ctx) {
    const s = ctx.settings as Record<string, any>
    if (!s.secrets?.jwtPrivatePem)
      throw new Error('the auth service needs the JWT private key (run `mmp init`)')
    const db = ctx.registry.platform('auth')
    const deps = {
      db,
      registry: ctx.registry,
      throttle: createLoginThrottle(db, {
        maxPerIp: (s['auth.login_max_failures'] as number | undefined) ?? 5,
        maxPerEmail: (s['auth.login_max_per_email'] as number | undefined) ?? 20,
        windowMs: ((s['auth.login_window_s'] as number | undefined) ?? 900) * 1000,
      }),
      clock: ctx.clock,
      log: ctx.log,
      refreshTtlSeconds: s['jwt.refresh_ttl_s'] as number,
      inviteTtlSeconds: 7 * 86400,
      revokeLocally: (r: Revocation) => ctx.tokens.revoke(r),
      keepSeconds:
        (s['jwt.access_ttl_s'] as number) +
        ((s['jwt.clock_tolerance_s'] as number | undefined) ?? 0),
      issuer: await createIssuer({
        privateKeyPem: s.secrets.jwtPrivatePem,
        issuer: s['jwt.issuer'],
        audience: s['jwt.audience'],
        ttlSeconds: s['jwt.access_ttl_s'],
        now: () => ctx.clock.nowMs(),
      }),
    }
    await bootstrapOperator(deps, {
      email: s['operator.email'],
      password: s['operator.password'],
      dataDir: s.data_dir,
    })
    // This process's verifier knows every live revocation before the first request.
    for (const r of currentRevocations(deps))
      ctx.tokens.revoke({ userId: r.user_id, sessionId: r.session_id, before: r.before })
    return { app: await createAuthApp(ctx, deps, s.secrets.jwtPublicPem) }
  },
})
