import type { ServiceContext } from '../kernel/context.ts'
import { createDaraja, type Daraja, type DarajaConfig } from './daraja.ts'
import { createDarajaBusiness, type DarajaBusiness } from './daraja-business.ts'

/**
 * The payment service's slice of the configuration, filled by the daemon (daemon/slices.ts) with
 * the settings naming `payment` in daemon/settings.ts. It is the only service holding the callback
 * secret and the provider's credentials.
 */
export interface PaymentSettings {
  /** Daraja's base URL, or the built-in simulator's when `mpesa.base_url` is unset. */
  providerUrl: string
  usingSimulator: boolean
  /** Public base URL the provider calls back, without a trailing slash (default: the gateway). */
  callbackBase: string
  /** HMAC key of callback tokens. */
  callbackSecret: string
  /** Callback source addresses or CIDR ranges; empty: any. */
  allowedIps: string[]
  /**
   * Where confirmations to a shortcode without an initiator may come from (Safaricom's published
   * addresses once live); empty: anywhere (the simulator, or the check turned off).
   */
  c2bSourceIps: string[]
  /** Payments pending longer than this are queried at the provider. */
  reconcileAfterS: number
  /** Daraja production (`mpesa.environment`): callback URLs handed to it must be https. */
  production: boolean
  /**
   * A `received` C2B confirmation whose status query failed is asked again until it is this old,
   * then marked `unverified` with an operator alert (`mpesa.c2b_verify_for_s`).
   */
  c2bVerifyForS: number
  /** Daraja app credentials: held in configuration, never taken from requests (SPEC). */
  credentials: Omit<DarajaConfig, 'baseUrl' | 'retries' | 'minTimeoutMs' | 'timeoutMs'>
}

/** The provider client the settings describe. */
export function providerFromSettings(ctx: ServiceContext<PaymentSettings>): Daraja {
  return createDaraja({ baseUrl: ctx.settings.providerUrl, ...ctx.settings.credentials }, () =>
    ctx.clock.now(),
  )
}

/** The C2B, status, balance and reversal client the settings describe. */
export function businessFromSettings(ctx: ServiceContext<PaymentSettings>): DarajaBusiness {
  return createDarajaBusiness({ baseUrl: ctx.settings.providerUrl, ...ctx.settings.credentials })
}
