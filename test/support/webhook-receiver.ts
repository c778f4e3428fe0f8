import { Webhook } from 'standardwebhooks'

/** One delivery a receiver got: its path, `webhook-id`, parsed body and whether it verified. */
export interface WebhookHit {
  path: string
  /** The first path segment, where the tests put the tenant: `/acme` → `acme`. */
  tenant: string
  id: string
  body: any
  verified: boolean
}

/**
 * A webhook receiver on a free local port that checks every delivery's signature with
 * `standardwebhooks` (a real peer, not our own code) and keeps what it got, in order.
 *
 * @example
 * const receiver = startWebhookReceiver(SECRET)
 * await admin.post('/api/v1/webhooks', { url: `${receiver.url}/acme`, secret: SECRET, … })
 */
export function startWebhookReceiver(secret: string, host = '127.0.0.1') {
  const hits: WebhookHit[] = []
  const server = Bun.serve({
    port: 0,
    hostname: host,
    async fetch(req) {
      const text = await req.text()
      const headers = Object.fromEntries(req.headers)
      let verified = false
      try {
        new Webhook(secret).verify(text, headers)
        verified = true
      } catch {}
      const path = new URL(req.url).pathname
      hits.push({
        path,
        tenant: path.slice(1).split('/')[0]!,
        id: headers['webhook-id'] ?? '',
        body: JSON.parse(text),
        verified,
      })
      return new Response('ok')
    },
  })
  return {
    url: `http://${host}:${server.port}`,
    port: server.port as number,
    hits,
    stop: () => server.stop(true),
  }
}
