import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq, ne } from 'drizzle-orm'
import { refreshTokens, users } from '../../schema/auth/tables.ts'
import type { TenantRegistry } from '../../tenants/registry.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { AppError } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import type { Logger } from '../kernel/log.ts'
import type { Role } from '../kernel/roles.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import type { Revocation } from '../kernel/tokens.ts'
import { hashToken, type Issuer, randomToken } from './issue.ts'
import type { LoginThrottle } from './throttle.ts'

/**
 * Auth's dependencies, the operator's first run and signing in (password to session). The people
 * of a tenant are users.ts's; API keys api-keys.ts's.
 */
export interface AuthDeps {
  db: Db
  /** For the plan's user limit (entitlements written by billing). */
  registry: TenantRegistry
  issuer: Issuer
  clock: Clock
  log: Logger
  refreshTtlSeconds: number
  inviteTtlSeconds: number
  /** The dashboard's address: an invitation's link opens its accept page. */
  publicUrl: string
  throttle: LoginThrottle
  /** Applies a revocation to this process's token verifier at once. */
  revokeLocally?: ((r: Revocation) => void) | undefined
  /** How long revocations are kept: the longest access-token lifetime in seconds. */
  keepSeconds: number
}

/**
 * A hash verified when the email is unknown, so both failures take the same time. Hashed off the
 * main thread and not awaited at import: argon2 is slow on purpose, and start-up must not wait.
 */
const DUMMY_HASH = Bun.password.hash('mmp-timing-equaliser', { algorithm: 'argon2id' })

export const hashPassword = (password: string) =>
  Bun.password.hash(password, { algorithm: 'argon2id' })

export const normaliseEmail = (email: string) => email.trim().toLowerCase()

/**
 * Creates the platform operator (Admin of tenant 'platform') on first run. Without a configured
 * password one is generated and written to `operator.txt` (0600) in the data dir.
 */
export async function bootstrapOperator(
  deps: AuthDeps,
  opts: { email: string; password: string | null; dataDir: string },
): Promise<void> {
  const existing = deps.db.orm
    .select({ id: users.id })
    .from(users)
    .where(eq(users.tenantId, PLATFORM_TENANT))
    .get()
  if (existing) return
  const password = opts.password ?? randomToken().slice(0, 24)
  const now = deps.clock.now().toISOString()
  const hash = await hashPassword(password)
  deps.db.write((orm) =>
    orm
      .insert(users)
      .values({
        id: newId('usr'),
        tenantId: PLATFORM_TENANT,
        email: normaliseEmail(opts.email),
        passwordHash: hash,
        role: 'Admin',
        status: 'active',
        createdAt: now,
        updatedAt: now,
      })
      .run(),
  )
  if (!opts.password) {
    const file = join(opts.dataDir, 'operator.txt')
    writeFileSync(file, `email: ${normaliseEmail(opts.email)}\npassword: ${password}\n`, {
      mode: 0o600,
    })
    chmodSync(file, 0o600)
    deps.log.info(`platform operator created; credentials written to ${file}`)
  } else {
    deps.log.info('platform operator created from MMP_OPERATOR_EMAIL / MMP_OPERATOR_PASSWORD')
  }
}

export interface Session {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  user: { id: string; email: string; role: Role; tenant_id: string }
}

/** Issues an access token and a new refresh token family member. */
export async function issueSession(
  deps: AuthDeps,
  user: { id: string; email: string; role: string; tenantId: string },
  familyId: string = newId('ses'),
): Promise<Session> {
  const { token, expiresIn } = await deps.issuer.accessToken({
    id: user.id,
    tenantId: user.tenantId,
    role: user.role as Role,
    sessionId: familyId,
  })
  const refresh = randomToken()
  const now = deps.clock.nowMs()
  deps.db.write((orm) =>
    orm
      .insert(refreshTokens)
      .values({
        id: newId('ses'),
        familyId,
        userId: user.id,
        tokenHash: hashToken(refresh),
        expiresAt: new Date(now + deps.refreshTtlSeconds * 1000).toISOString(),
        createdAt: new Date(now).toISOString(),
      })
      .run(),
  )
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: expiresIn,
    refresh_token: refresh,
    user: { id: user.id, email: user.email, role: user.role as Role, tenant_id: user.tenantId },
  }
}

/**
 * Email and password to a session; a wrong email and a wrong password give the same 401.
 * The attempt is reserved with the throttle (throttle.ts) before the password is checked, so a
 * locked key reveals nothing and concurrent guesses cannot overtake the count. `ip` is the only
 * client-address input: whoever decides where it comes from changes the caller, not this.
 */
export async function login(
  deps: AuthDeps,
  {
    email,
    password,
    ip = 'unknown',
  }: {
    email: string
    password: string
    /** The client's address, for the login throttle. */
    ip?: string
  },
): Promise<Session> {
  const normalised = normaliseEmail(email)
  deps.throttle.reserve(normalised, ip, deps.clock.nowMs())
  // Invitations may share an address with an account (one in another tenant): sign in to that.
  const user = deps.db.orm
    .select()
    .from(users)
    .where(and(eq(users.email, normalised), ne(users.status, 'invited')))
    .get()
  const dummy = await DUMMY_HASH
  const ok = await Bun.password.verify(password, user?.passwordHash ?? dummy)
  if (!user || !ok || user.status !== 'active') {
    throw new AppError('UNAUTHENTICATED', 'the email or password is wrong')
  }
  deps.throttle.succeeded(normalised, ip)
  return issueSession(deps, user)
}
