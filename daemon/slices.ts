import type { AuthSettings } from '../services/auth/settings.ts'
import type { BillingSettings } from '../services/billing/billing.ts'
import type { NoSettings, ServiceName } from '../services/kernel/context.ts'
import type { PaymentSettings } from '../services/payment/settings.ts'
import type { TenantSettings } from '../services/tenant/settings.ts'
import type { WebhookSettings } from '../services/webhook/settings.ts'
import { backupRunner } from './backup-schedule.ts'
import type { Config } from './config.ts'
import type { Secrets } from './secrets.ts'
import { version } from './version.ts'

/** The settings slice each service declares; the daemon builds it, the service only reads it. */
export interface Slices {
  analytics: NoSettings
  auth: AuthSettings
  tenant: TenantSettings
  parser: NoSettings
  cashflow: NoSettings
  payment: PaymentSettings
  billing: BillingSettings
  categorizer: NoSettings
  webhook: WebhookSettings
}

/** What a slice is built from: the frozen config, the loaded secrets, this host's addresses. */
export interface SliceSource {
  config: Config
  secrets: Secrets
  /** Where the gateway listens on this host: the provider's callbacks go there unless set. */
  gatewayUrl: string
  /** Where the built-in M-Pesa simulator listens on this host. */
  simulatorUrl: string
}

const none = (): NoSettings => ({})

/**
 * One builder per service. Each reads exactly the settings that name the service in
 * daemon/settings.ts, and of the secrets only the ones it uses (`slices.test.ts` holds both).
 */
const builders: { [N in ServiceName]: (from: SliceSource) => Slices[N] } = {
  analytics: none,
  // The schedule's run, so POST /api/v1/backups writes where scheduled backups go.
  tenant: ({ config }) => ({ backup: backupRunner(config, version) }),
  parser: none,
  cashflow: none,
  categorizer: none,
  auth: ({ config, secrets, gatewayUrl }) => ({
    issuer: config.get('jwt.issuer'),
    audience: config.get('jwt.audience'),
    accessTtlS: config.get('jwt.access_ttl_s'),
    refreshTtlS: config.get('jwt.refresh_ttl_s'),
    clockToleranceS: config.get('jwt.clock_tolerance_s'),
    login: {
      maxFailures: config.get('auth.login_max_failures'),
      maxPerEmail: config.get('auth.login_max_per_email'),
      windowS: config.get('auth.login_window_s'),
    },
    operator: {
      email: config.get('operator.email'),
      password: config.get('operator.password'),
    },
    dataDir: config.dataDir,
    publicUrl: (config.get<string | null>('gateway.public_url') ?? gatewayUrl).replace(/\/+$/, ''),
    // The key files' settings (jwt.*_key_file) reach auth as the keys loadSecrets read from them.
    jwtPrivatePem: secrets.jwtPrivatePem,
    jwtPublicPem: secrets.jwtPublicPem,
  }),
  payment: ({ config, secrets, gatewayUrl, simulatorUrl }) => {
    const base = config.get<string | null>('mpesa.base_url')
    const callbackBase = config.get<string | null>('mpesa.callback_base_url') ?? gatewayUrl
    return {
      providerUrl: (
        base ??
        config.get<string | null>('mpesa.simulator_url') ??
        simulatorUrl
      ).replace(/\/+$/, ''),
      usingSimulator: !base,
      callbackBase: callbackBase.replace(/\/+$/, ''),
      // mpesa.callback_secret, else secrets.json; loadSecrets resolves it. A data dir without one
      // still signs, with a key of this process only.
      callbackSecret:
        secrets.callbackSecret ||
        Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'),
      allowedIps: config.get<string[]>('mpesa.allowed_ips').filter(Boolean),
      c2bSourceIps: c2bSourceIps(config, !!base),
      reconcileAfterS: config.get('mpesa.reconcile_after_s'),
      production: productionDaraja(config.get('mpesa.environment'), base),
      c2bVerifyForS: config.get('mpesa.c2b_verify_for_s'),
      credentials: {
        consumerKey: config.get('mpesa.consumer_key'),
        consumerSecret: config.get('mpesa.consumer_secret'),
        shortcode: config.get('mpesa.shortcode'),
        passkey: config.get('mpesa.passkey'),
        initiatorName: config.get('mpesa.b2c_initiator'),
        securityCredential: config.get('mpesa.b2c_security_credential'),
      },
    }
  },
  billing: ({ config }) => ({
    graceDays: config.get('billing.grace_days'),
    dueDays: config.get('billing.due_days'),
    cycleIntervalS: config.get('billing.cycle_interval_s'),
  }),
  webhook: ({ config, secrets }) => ({
    allowInsecure: config.get('webhook.allow_insecure'),
    allowHosts: config.get('webhook.allow_hosts'),
    retrySchedule: config.get('webhook.retry_schedule'),
    timeoutMs: config.get('webhook.timeout_ms'),
    rateLimit: config.get('webhook.rate_limit'),
    maxInFlight: config.get('webhook.max_in_flight'),
    // webhook.secret_key, else secrets.json; loadSecrets resolves it.
    secretKey: secrets.webhookKey,
  }),
}

/** The typed settings slice of one service, frozen. */
export function sliceOf<N extends ServiceName>(name: N, from: SliceSource): Slices[N] {
  return deepFreeze(builders[name](from))
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

/** Daraja production (it refuses http callback URLs): said so, or auto and Safaricom's API host. */
export function productionDaraja(environment: string, base: string | null | undefined): boolean {
  if (environment !== 'auto') return environment === 'production'
  try {
    return !!base && new URL(base).hostname === 'api.safaricom.co.ke'
  } catch {
    return false
  }
}

/** The addresses C2B confirmations must come from: mpesa.c2b_source_ips when the check is on. */
function c2bSourceIps(config: Config, live: boolean): string[] {
  const check = config.get<string>('mpesa.c2b_source_check')
  const ips = config.get<string[]>('mpesa.c2b_source_ips').filter(Boolean)
  return check === 'on' || (check === 'auto' && live) ? ips : []
}
