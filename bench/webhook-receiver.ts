/** A receiver for bench/webhook.ts, run as its own process: counts deliveries, notes latencies. */
const now = () => performance.timeOrigin + performance.now()
let count = 0
const ids = new Set<string>()
let arrivals: Record<string, number> = {}
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const url = new URL(req.url)
    if (url.pathname === '/stats') {
      const body = JSON.stringify({ count, unique: ids.size, arrivals })
      return new Response(body)
    }
    if (url.pathname === '/reset') {
      count = 0
      ids.clear()
      arrivals = {}
      return new Response('ok')
    }
    const text = await req.text()
    count++
    ids.add(req.headers.get('webhook-id') ?? '')
    const tx = /"transaction_id":"(txn_lat_[0-9]+)"/.exec(text)
    if (tx) arrivals[tx[1]!] = now()
    return new Response('ok')
  },
})
console.log(server.port)
