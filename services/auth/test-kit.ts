import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose'
import { migrations } from '../../schema/auth/migrations.ts'
import { createTestKit } from '../kernel/testing.ts'
import { createTokenVerifier, TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import auth from './index.ts'

export const OPERATOR = { email: 'op@mmp.test', password: 'operator-password' }

/** The auth service on a test kit, with tenant 'acme' existing and the operator created. */
export async function authKit(settings: Record<string, unknown> = {}) {
  const { privateKey, publicKey } = await generateKeyPair(TOKEN_ALGORITHM, {
    crv: 'Ed25519',
    extractable: true,
  })
  const jwtPublicPem = await exportSPKI(publicKey)
  const kit = await createTestKit('auth', {
    migrations,
    settings: {
      'jwt.access_ttl_s': 900,
      'jwt.refresh_ttl_s': 3600,
      'operator.email': OPERATOR.email,
      'operator.password': OPERATOR.password,
      secrets: { jwtPrivatePem: await exportPKCS8(privateKey), jwtPublicPem },
      ...settings,
    },
  })
  kit.ctx.tokens = await createTokenVerifier(
    jwtPublicPem,
    { issuer: 'mmp', audience: 'mmp', clockToleranceSec: 5 },
    { now: () => kit.ctx.clock.nowMs() },
  )
  // The tenant service's profile: tenants a request names must exist.
  kit.registry.setPlacement('acme', { isolation: 'shared' })
  const instance = await auth.create(kit.ctx)
  return { kit, instance }
}
