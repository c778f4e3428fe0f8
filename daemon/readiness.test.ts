import { describe, expect, it } from 'bun:test'
import { createReadiness } from './readiness.ts'

describe('readiness', () => {
  const health = new Request('http://127.0.0.1:9000/health')

  it('answers /health with a 503 naming every part not serving yet, until none is left', async () => {
    const readiness = createReadiness(['payment', 'gateway', 'simulator'])
    readiness.done('payment')
    const res = readiness.answer('gateway', health)
    expect(res?.status).toBe(503)
    expect(await res?.json()).toMatchObject({
      service: 'gateway',
      status: 'starting',
      checks: { gateway: { status: 'starting' }, simulator: { status: 'starting' } },
    })
    readiness.done('gateway', 'simulator')
    expect(readiness.answer('gateway', health)).toBeNull()
    expect(readiness.waiting()).toEqual([])
  })

  it('leaves every other request to the part itself', () => {
    const readiness = createReadiness(['simulator'])
    for (const url of ['http://h/api/v1/health', 'http://h/healthz', 'http://h/?q=/health'])
      expect(readiness.answer('gateway', new Request(url))).toBeNull()
  })
})
