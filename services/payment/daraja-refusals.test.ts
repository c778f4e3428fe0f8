import { afterAll, describe, expect, it } from 'bun:test'
import { createDaraja, ProviderError } from './daraja.ts'
import { createDarajaBusiness } from './daraja-business.ts'
import { refusalOf } from './daraja-transport.ts'

/**
 * Daraja's refusals before it takes a push are told apart from answers that may hide a taken
 * push, and every client of one app shares its one OAuth token (a new token invalidates the old).
 */
describe('Daraja refusals and the shared token', () => {
  let live = 0
  let pushAnswer: { status: number; body: Record<string, unknown> } | null = null
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/oauth/v1/generate') {
        const basic = Buffer.from('shared-key:s').toString('base64')
        if (
          req.headers.get('authorization') &&
          req.headers.get('authorization') !== `Basic ${basic}`
        )
          return Response.json(
            {
              requestId: 'r',
              errorCode: '400.008.01',
              errorMessage: 'Invalid Authentication passed',
            },
            { status: 400 },
          )
        return Response.json({ access_token: `tok-${++live}`, expires_in: '3599' })
      }
      if (req.headers.get('authorization') !== `Bearer tok-${live}`)
        return Response.json(
          { errorCode: '404.001.03', errorMessage: 'Invalid Access Token' },
          { status: 404 },
        )
      if (pushAnswer) return Response.json(pushAnswer.body, { status: pushAnswer.status })
      return Response.json({
        MerchantRequestID: 'm',
        CheckoutRequestID: 'ws_CO_1',
        ResponseCode: '0',
        ResponseDescription: 'ok',
        ConversationID: 'AG_1',
        OriginatorConversationID: 'o',
      })
    },
  })
  afterAll(() => server.stop(true))
  const cfg = {
    baseUrl: `http://127.0.0.1:${server.port}`,
    consumerKey: 'shared-key',
    consumerSecret: 's',
    shortcode: '174379',
    passkey: 'p',
    initiatorName: 'i',
    securityCredential: 'c',
    minTimeoutMs: 1,
  }
  const input = {
    phoneNumber: '254712345678',
    amount: 1,
    accountReference: 'a',
    transactionDesc: 'b',
    callbackUrl: 'http://127.0.0.1/cb',
  }

  it('tells the 500.001.1001 refusals and busy answers from a 500 that may hide a taken push', async () => {
    const cases: Array<[string, string, ReturnType<typeof refusalOf>, boolean]> = [
      ['500.001.1001', 'Wrong credentials', 'credentials', false],
      ['500.001.1001', 'Merchant does not exist', 'credentials', false],
      [
        '500.001.1001',
        'Unable to lock subscriber, a transaction is already in process for the current subscriber',
        'locked',
        false,
      ],
      ['500.003.02', 'System is busy. Please try again in few minutes.', 'busy', false],
      ['500.003.03', 'Quota Violation', 'busy', false],
      ['500.003.1001', 'Internal Server Error', null, true],
    ]
    // The app's keys refused by OAuth: the push was never sent, and the settings are at fault.
    const badKeys = createDaraja({ ...cfg, consumerKey: 'other-key', retries: 0 })
    const oauth = (await badKeys.stkPush(input).catch((e) => e)) as ProviderError
    expect({ refusal: refusalOf(oauth), reached: oauth.reached }).toEqual({
      refusal: 'credentials',
      reached: false,
    })
    const daraja = createDaraja({ ...cfg, retries: 0 })
    for (const [errorCode, errorMessage, refusal, reached] of cases) {
      pushAnswer = { status: 500, body: { requestId: 'r', errorCode, errorMessage } }
      const err = (await daraja.stkPush(input).catch((e) => e)) as ProviderError
      expect(err).toBeInstanceOf(ProviderError)
      expect({ errorMessage, refusal: refusalOf(err), reached: err.reached }).toEqual({
        errorMessage,
        refusal,
        reached,
      })
    }
    pushAnswer = null
  })

  it('shares one token between the clients of one app and renews it when Daraja says it is stale', async () => {
    const stk = createDaraja(cfg)
    const business = createDarajaBusiness(cfg)
    expect((await stk.stkPush(input)).CheckoutRequestID).toBe('ws_CO_1')
    const before = live
    // Another client of the same app in this process uses the same token: no new one is made.
    await business.accountBalance({
      originatorConversationId: 'o-1',
      shortcode: '174379',
      remarks: 'check',
      resultUrl: 'http://127.0.0.1/r',
      timeoutUrl: 'http://127.0.0.1/t',
    } as never)
    expect(live).toBe(before)
    // Someone else generated a token (Daraja invalidates ours): the push is sent again with a new one.
    await fetch(`${cfg.baseUrl}/oauth/v1/generate`)
    expect((await stk.stkPush(input)).CheckoutRequestID).toBe('ws_CO_1')
  })
})
