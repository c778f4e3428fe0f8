/**
 * Payment benchmark (`bun bench/payment.ts`):
 * 1. End to end latency of one payment with the simulator at zero delay: STK push through the
 *    gateway → simulator callback → STK query confirmation → status `success` and the
 *    `mobilemoney.transactions.success` event received by an MQTT subscriber. Target p99 ≤ 50 ms.
 * 2. Sustained STK pushes per second through the gateway, next to the same count of direct calls
 *    to the payment service (the reference), as a ratio.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt from 'mqtt'
import { startTestPlatform } from '../test/support/platform.ts'
import { createTenants } from '../test/support/tenants.ts'
import { sized } from './support.ts'

const LATENCY_RUNS = Number(process.env.BENCH_RUNS ?? sized(300, 5))
const THROUGHPUT_COUNT = Number(process.env.BENCH_COUNT ?? sized(2000, 50))
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)

const p = await startTestPlatform({
  only: 'gateway,auth,tenant,payment,simulator,broker',
  env: {
    MMP_SIMULATOR_DELAY_MS: '0',
    MMP_RATE_LIMIT_FREE: '1000000',
    MMP_RATE_LIMIT_IP: '1000000',
    MMP_LOG_LEVEL: 'warn',
  },
})
try {
  // Unknown tenants are refused: the tenant is created first, and its owner pushes.
  await createTenants(p.gateway, await p.login(), 'bench')
  const token = await p.login('owner@bench.test', 'bench-Owner-Passphrase-42')
  const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
  const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${p.offset + 1883}`, {
    username: secrets.mqtt_username,
    password: secrets.mqtt_password,
    clientId: `payment-bench-${p.offset}`,
  })
  const waiting = new Map<string, () => void>()
  const arrived = new Set<string>()
  sub.on('message', (_t, payload) => {
    const e = JSON.parse(payload.toString()) as { data: { checkout_request_id?: string } }
    const id = e.data.checkout_request_id
    if (!id) return
    arrived.add(id)
    waiting.get(id)?.()
  })
  await sub.subscribeAsync('mobilemoney.transactions.success', { qos: 1 })

  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  let n = 0
  const body = () =>
    JSON.stringify({
      tenant_id: 'bench',
      phone_number: `2547${String(n++ % 10000).padStart(4, '0')}5678`,
      amount: 100,
      account_reference: 'BENCH',
      transaction_desc: 'bench',
    })
  const push = async (base: string) => {
    const res = await fetch(`${base}/api/v1/payments/stkpush`, {
      method: 'POST',
      headers,
      body: body(),
    })
    if (res.status !== 202) throw new Error(`stkpush: ${res.status} ${await res.text()}`)
    return (await res.json()) as { checkout_request_id: string }
  }

  const oneCycle = async (): Promise<number> => {
    const t0 = performance.now()
    const { checkout_request_id: id } = await push(p.gateway)
    if (!arrived.has(id))
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event for ${id}`)), 10_000)
        waiting.set(id, () => {
          clearTimeout(timer)
          resolve()
        })
      })
    waiting.delete(id)
    for (;;) {
      const res = await fetch(`${p.gateway}/api/v1/payments/status/${id}`, { headers })
      const s = (await res.json()) as { status: string }
      if (s.status === 'success') break
      if (s.status !== 'pending') throw new Error(`payment ended ${s.status}`)
    }
    return performance.now() - t0
  }

  for (let i = 0; i < sized(20, 2); i++) await oneCycle() // warm up
  const lat: number[] = []
  for (let i = 0; i < LATENCY_RUNS; i++) lat.push(await oneCycle())
  lat.sort((a, b) => a - b)
  const q = (f: number) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))]!
  console.log(
    `end-to-end payment (push → callback → confirmed → status success + event), ${LATENCY_RUNS} runs: ` +
      `p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms (target ≤ 50 ms: ${q(0.99) <= 50 ? 'met' : 'NOT met'})`,
  )

  const rate = async (base: string) => {
    let next = 0
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < THROUGHPUT_COUNT) {
          next++
          await push(base)
        }
      }),
    )
    return THROUGHPUT_COUNT / ((performance.now() - t0) / 1000)
  }
  const direct = await rate(p.url('payment'))
  const viaGateway = await rate(p.gateway)
  console.log(
    `sustained STK pushes/s at concurrency ${CONCURRENCY}, ${THROUGHPUT_COUNT} each: ` +
      `through the gateway ${viaGateway.toFixed(0)}/s, direct to the service ${direct.toFixed(0)}/s ` +
      `(ratio ${(viaGateway / direct).toFixed(2)})`,
  )
  await sub.endAsync()
} finally {
  await p.dispose()
}
