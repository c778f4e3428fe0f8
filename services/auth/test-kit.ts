import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose'
import { migrations } from '../../schema/auth/migrations.ts'
import { createTestKit } from '../kernel/testing.ts'
import { createTokenVerifier, TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import auth from './index.ts'
import type { AuthSettings } from './settings.ts'

export const OPERATOR = { email: 'op@mmp.test', password: 'operator-password' }

/** The auth service on a test kit, with tenant 'acme' existing and the operator created. */
export async function authKit(overrides: Partial<AuthSettings> = {}) {
  const { privateKey, publicKey } = await generateKeyPair(TOKEN_ALGORITHM, {
    crv: 'Ed25519',
    extractable: true,
  })
  const jwtPublicPem = await exportSPKI(publicKey)
  const settings: AuthSettings = {
    issuer: 'mmp',
    audience: 'mmp',
    accessTtlS: 900,
    refreshTtlS: 3600,
    clockToleranceS: 0,
    login: { maxFailures: 5, maxPerEmail: 20, windowS: 900 },
    operator: OPERATOR,
    dataDir: '',
    publicUrl: 'http://mmp.test',
    jwtPrivatePem: await exportPKCS8(privateKey),
    jwtPublicPem,
    ...overrides,
  }
  const kit = await createTestKit('auth', { migrations, settings })
  // The data dir exists only once the kit made it.
  kit.ctx.settings = { ...settings, dataDir: overrides.dataDir ?? kit.dataDir }
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
