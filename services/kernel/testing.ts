import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import type { Migration } from '../../schema/kernel.ts'
import { createRegistry, type Placement, type TenantRegistry } from '../../tenants/registry.ts'
import { createMemoryBus } from './bus.ts'
import { createClock } from './clock.ts'
import type { NoSettings, ServiceContext, ServiceName } from './context.ts'
import { createRelay } from './events.ts'
import { createHop } from './hop.ts'
import { createServiceClient, staticDiscovery } from './http-client.ts'
import { newId } from './ids.ts'
import { createLogger } from './log.ts'
import type { Role } from './roles.ts'
import { isTenantId } from './tenant-id.ts'
import { createTokenVerifier, TOKEN_ALGORITHM } from './tokens.ts'

export interface TestKit<S = unknown> {
  ctx: ServiceContext<S>
  registry: TenantRegistry
  bus: ReturnType<typeof createMemoryBus>
  dataDir: string
  /** A valid access token for a user of a tenant. */
  tokenFor(opts: {
    tenantId: string
    role?: Role
    userId?: string
    expiresIn?: number
  }): Promise<string>
  /** Makes a tenant exist (its placement profile), as the tenant service does on create. */
  createTenant(tenantId: string, placement?: Partial<Placement>): void
  /** Authorization header for the same. */
  authFor(opts: {
    tenantId: string
    role?: Role
    userId?: string
  }): Promise<{ authorization: string }>
  cleanup(): void
}

/**
 * A service context for unit tests: temp data dir, real migrations, an in-memory bus, a real
 * key pair, and a clock the test can move. `settings` is the service's whole typed slice (none for
 * a service that owns no setting). Build the service's Elysia app with `kit.ctx` and call
 * `app.handle(new Request(...))`.
 *
 * @example
 * const kit = await createTestKit('billing', {
 *   migrations,
 *   settings: { graceDays: 7, dueDays: 7, cycleIntervalS: 0 } satisfies BillingSettings,
 * })
 * const app = createBillingApp(kit.ctx, createBilling(kit.ctx))
 * const res = await app.handle(new Request('http://localhost/api/v1/...', { headers: await kit.authFor({ tenantId: 'acme' }) }))
 */
export async function createTestKit<S>(
  service: ServiceName,
  opts: { migrations: readonly Migration[]; settings: S },
): Promise<TestKit<S>>
export async function createTestKit(
  service: ServiceName,
  opts: { migrations: readonly Migration[] },
): Promise<TestKit<NoSettings>>
export async function createTestKit(
  service: ServiceName,
  opts: { migrations: readonly Migration[]; settings?: unknown },
): Promise<TestKit<unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), `mmp-${service}-`))
  const { privateKey, publicKey } = await generateKeyPair(TOKEN_ALGORITHM, {
    crv: 'Ed25519',
    extractable: true,
  })
  const publicPem = await exportSPKI(publicKey)
  const settings = { issuer: 'mmp', audience: 'mmp', clockToleranceSec: 5 }
  const clock = createClock()
  const log = createLogger(service)
  log.level = -999
  const bus = createMemoryBus(log)
  const relay = createRelay({ bus, log })
  const real = createRegistry({
    dataDir,
    migrations: () => opts.migrations,
    onOpen: (db) => relay.watch(db),
  })
  // Unit tests address tenants freely: the first use makes the tenant exist, as if the tenant
  // service had created it. The existence check itself is tested on a real registry.
  const registry: TenantRegistry = {
    ...real,
    tenant(service, tenantId) {
      createTenant(tenantId)
      return real.tenant(service, tenantId)
    },
    assertExists(tenantId) {
      createTenant(tenantId)
      return real.assertExists(tenantId)
    },
  }
  function createTenant(tenantId: string, placement: Partial<Placement> = {}): void {
    if (tenantId === 'platform' || !isTenantId(tenantId) || real.hasProfile(tenantId)) return
    real.setPlacement(tenantId, { isolation: 'shared', ...placement })
  }
  const tokens = await createTokenVerifier(publicPem, settings, { now: () => clock.nowMs() })
  const discovery = staticDiscovery({} as never)
  const tokenFor: TestKit['tokenFor'] = async (o) => {
    const iat = Math.floor(clock.nowMs() / 1000)
    return new SignJWT({ tenant_id: o.tenantId, role: o.role ?? 'Admin' })
      .setProtectedHeader({ alg: TOKEN_ALGORITHM })
      .setIssuer('mmp')
      .setAudience('mmp')
      .setSubject(o.userId ?? 'usr_test')
      .setIssuedAt(iat)
      .setExpirationTime(iat + (o.expiresIn ?? 900))
      .setJti(newId('ses'))
      .sign(privateKey)
  }
  const ctx: ServiceContext = {
    name: service,
    version: 'test',
    settings: opts.settings ?? {},
    registry,
    bus,
    relay,
    tokens,
    clock,
    log,
    client: createServiceClient(discovery),
    hop: createHop('test-hop-key'),
    checks: new Map(),
  }
  return {
    ctx,
    registry,
    bus,
    dataDir,
    tokenFor,
    createTenant,
    authFor: async (o) => ({ authorization: `Bearer ${await tokenFor(o)}` }),
    cleanup() {
      registry.closeAll()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Polls `probe` until it returns something truthy, or fails after `ms` saying `what` was awaited:
 * for waiting on events that cross the broker without sleeping a fixed time. The one polling
 * helper of the tests, end-to-end (test/support/platform.ts re-exports it) and unit alike.
 *
 * @example
 * const e = await eventually(async () => events.find((x) => x.id === id), 10_000, 'the event')
 */
export async function eventually<T>(
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms`)
    await Bun.sleep(50)
  }
}
