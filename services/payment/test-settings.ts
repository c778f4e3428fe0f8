import type { PaymentSettings } from './settings.ts'

/**
 * Payment settings for unit tests: the simulator's credentials, a fixed callback secret and no
 * source allow-list; each test names where the provider is and where callbacks come back.
 */
export function testPaymentSettings(
  over: Pick<PaymentSettings, 'providerUrl' | 'callbackBase'> & Partial<PaymentSettings>,
): PaymentSettings {
  return {
    usingSimulator: true,
    callbackSecret: 'test-secret',
    allowedIps: [],
    c2bSourceIps: [],
    reconcileAfterS: 120,
    production: false,
    c2bVerifyForS: 86400,
    credentials: {
      consumerKey: 'mmp-simulator-key',
      consumerSecret: 'mmp-simulator-secret',
      shortcode: '174379',
      passkey: 'mmp-simulator-passkey',
      initiatorName: 'mmp',
      securityCredential: 'mmp-simulator-credential',
    },
    ...over,
  }
}
