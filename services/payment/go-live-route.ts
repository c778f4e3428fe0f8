import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { checkConfiguredDaraja, type GoLiveCheck } from './go-live.ts'
import { secured } from './route-options.ts'
import type { PaymentSettings } from './settings.ts'

/**
 * The operator's go-live check over HTTP (`POST /api/v1/payments/daraja/check`): the same checks
 * as `mmp doctor --daraja`, run by the payment service with the settings it pays with.
 */
const Status = t.Union([t.Literal('ok'), t.Literal('warn'), t.Literal('fail')])

export const DarajaCheckReport = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('warn'), t.Literal('fail')], {
    description: 'the worst of the checks: fail when any check fails, else warn when any warns',
  }),
  provider_url: t.String({ description: 'the Daraja base URL (or the simulator) that was called' }),
  live: t.Boolean({ description: 'false: the provider is the built-in simulator' }),
  checked_at: t.String(),
  checks: t.Array(
    t.Object({
      name: t.String({
        description: 'daraja callback url, daraja oauth, daraja stk credentials, daraja pull',
      }),
      status: Status,
      detail: t.String({ description: 'what was found, in one line' }),
      fix: t.Optional(t.String({ description: 'what to change, when it is not ok' })),
    }),
  ),
})

const worst = (checks: GoLiveCheck[]): GoLiveCheck['status'] =>
  checks.some((c) => c.status === 'fail')
    ? 'fail'
    : checks.some((c) => c.status === 'warn')
      ? 'warn'
      : 'ok'

/** Runs the check now (it calls the provider: a few seconds at most, ten per call). */
export async function darajaCheck(ctx: ServiceContext, cfg: PaymentSettings) {
  const now = ctx.clock.now()
  const checks = await checkConfiguredDaraja(cfg, now)
  ctx.log.info('daraja go-live check', {
    status: worst(checks),
    failed: checks.filter((c) => c.status !== 'ok').map((c) => c.name),
  })
  return {
    status: worst(checks),
    provider_url: cfg.providerUrl,
    live: !cfg.usingSimulator,
    checked_at: now.toISOString(),
    checks,
  }
}

/**
 * The route's options, a new object for each app: Elysia resolves the auth macro into the object
 * it is given, so a shared one would keep the first app's token verifier.
 */
export const darajaCheckRoute = () => ({
  auth: 'operator' as const,
  response: { 200: DarajaCheckReport },
  detail: {
    summary:
      'Go-live check of the configured Daraja (as `mmp doctor --daraja`): OAuth with the consumer key and secret, the shortcode and passkey (an STK query that charges nobody), Pull Transactions and the callback URL, one line each with ok, warn or fail. It uses the OAuth token payments hold (a new one would make Daraja invalidate theirs).',
    tags: ['payments'],
    ...secured,
  },
})
