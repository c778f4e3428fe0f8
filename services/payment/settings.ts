import type { ServiceContext } from '../kernel/context.ts'
import { createDaraja, type Daraja } from './daraja.ts'

export interface PaymentSettings {
  providerUrl: string
  usingSimulator: boolean
  callbackBase: string
  callbackSecret: string
  allowedIps: string[]
  reconcileAfterS: number
}

/** The payment service's slice of the frozen configuration. */
export function paymentSettings(ctx: ServiceContext): PaymentSettings {
  const s = ctx.settings as Record<string, unknown>
  const base = (s['mpesa.base_url'] as string | null | undefined) ?? null
  const secrets = (s.secrets ?? {}) as { callbackSecret?: string }
  return {
    providerUrl: base ?? String(s.simulator_url ?? 'http://127.0.0.1:8099'),
    usingSimulator: !base,
    callbackBase: String(
      (s['mpesa.callback_base_url'] as string | null | undefined) ??
        s.gateway_url ??
        'http://127.0.0.1:9000',
    ).replace(/\/+$/, ''),
    callbackSecret:
      (s['mpesa.callback_secret'] as string | null | undefined) ||
      secrets.callbackSecret ||
      Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'),
    allowedIps: ((s['mpesa.allowed_ips'] as string[] | undefined) ?? []).filter(Boolean),
    reconcileAfterS: Number(s['mpesa.reconcile_after_s'] ?? 120),
  }
}

export function providerFromSettings(ctx: ServiceContext, url: string): Daraja {
  const s = ctx.settings as Record<string, unknown>
  const str = (k: string, d: string) => String((s[k] as string | null | undefined) ?? d)
  return createDaraja(
    {
      baseUrl: url,
      consumerKey: str('mpesa.consumer_key', 'mmp-simulator-key'),
      consumerSecret: str('mpesa.consumer_secret', 'mmp-simulator-secret'),
      shortcode: str('mpesa.shortcode', '174379'),
      passkey: str('mpesa.passkey', 'mmp-simulator-passkey'),
      initiatorName: str('mpesa.b2c_initiator', 'mmp'),
      securityCredential: str('mpesa.b2c_security_credential', 'mmp-simulator-credential'),
    },
    () => ctx.clock.now(),
  )
}
