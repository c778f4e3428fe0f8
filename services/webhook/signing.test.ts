import { describe, expect, it } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { generateSecret, secretKey, signedHeaders } from './signing.ts'

describe('webhook signing', () => {
  const body = JSON.stringify({ id: 'msg_1', event: 'payment.success', data: { amount: 10 } })
  const now = Math.floor(Date.now() / 1000)

  it('verifies with standardwebhooks for a whsec_ secret', () => {
    const secret = generateSecret()
    const headers = signedHeaders([secretKey(secret)!], 'msg_1', now, body)
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ event: 'payment.success' })
  })

  it('uses a plain secret as its UTF-8 bytes (verifier gets base64 of them or raw format)', () => {
    const secret = 'plain-secret-ü'
    const headers = signedHeaders([secretKey(secret)!], 'msg_1', now, body)
    const b64 = Buffer.from(secret, 'utf8').toString('base64')
    expect(new Webhook(b64).verify(body, headers)).toBeTruthy()
    const ascii = 'plain-ascii-secret'
    const h2 = signedHeaders([secretKey(ascii)!], 'msg_1', now, body)
    expect(new Webhook(ascii, { format: 'raw' }).verify(body, h2)).toBeTruthy()
  })

  it('signs with every key so a rotated secret still verifies', () => {
    const oldS = generateSecret()
    const newS = generateSecret()
    const headers = signedHeaders([secretKey(newS)!, secretKey(oldS)!], 'msg_2', now, body)
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2)
    expect(new Webhook(oldS).verify(body, headers)).toBeTruthy()
    expect(new Webhook(newS).verify(body, headers)).toBeTruthy()
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow()
  })

  it('refuses a whsec_ secret that is not base64', () => {
    expect(secretKey('whsec_not base64!')).toBeNull()
    expect(secretKey('whsec_')).toBeNull()
  })
})
