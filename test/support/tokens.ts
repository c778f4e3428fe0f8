import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { importPKCS8, SignJWT } from 'jose'

/**
 * Signs an access token with a test platform's own key, for tests that need many tenants' tokens
 * (a login per tenant is slow on purpose) or must not make the platform do anything (crash tests).
 */
export async function signToken(
  dataDir: string,
  claims: { tenantId: string; role?: string; userId?: string },
): Promise<string> {
  const key = await importPKCS8(
    readFileSync(join(dataDir, 'keys', 'jwt-private.pem'), 'utf8'),
    'EdDSA',
  )
  return new SignJWT({ tenant_id: claims.tenantId, role: claims.role ?? 'Admin' })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer('mmp')
    .setAudience('mmp')
    .setSubject(claims.userId ?? `usr_${claims.tenantId.replaceAll('-', '')}`)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key)
}
