import { Elysia } from 'elysia'
import { darajaError, receiptNumber } from './model.ts'

/**
 * Daraja's OAuth (`GET /oauth/v1/generate?grant_type=client_credentials` with Basic
 * key:secret) and the token check every API makes. As Daraja: "each request invalidates the
 * previous token", one live token per app, valid 3599 s.
 */
export function createOAuth({ key, secret }: { key: string; secret: string }) {
  let live: { token: string; expiresAt: number } | null = null

  /** HTTP 404 `404.001.03` for a missing, stale or unknown bearer token; null for the live one. */
  const tokenRefused = (request: Request): Response | null => {
    const m = /^bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
    const ok = !!m && !!live && m[1] === live.token && live.expiresAt > Date.now()
    return ok ? null : darajaError(404, '404.001.03', 'Invalid Access Token')
  }

  const app = new Elysia({ name: 'mmp-simulator-oauth' }).get(
    '/oauth/v1/generate',
    ({ request, query }) => {
      if (query.grant_type !== 'client_credentials')
        return darajaError(400, '400.008.02', 'Invalid grant type passed')
      const m = /^basic\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
      const given = m ? Buffer.from(m[1]!, 'base64').toString() : ''
      if (given !== `${key}:${secret}`)
        return darajaError(400, '400.008.01', 'Invalid Authentication passed')
      const token = receiptNumber() + receiptNumber() + receiptNumber()
      live = { token, expiresAt: Date.now() + 3599_000 }
      return { access_token: token, expires_in: '3599' }
    },
  )
  return { app, tokenRefused }
}
