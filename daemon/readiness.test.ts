import { describe, expect, it } from 'bun:test'
import {
  createReadiness,
  followSupervisorReadiness,
  PLATFORM_READY,
  WORKERS_STARTING,
} from './readiness.ts'

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

describe('warming up', () => {
  const health = new Request('http://127.0.0.1:9000/health')

  it('keeps /health 200 while work the parts serve without goes on, and says what it is', () => {
    const readiness = createReadiness([])
    readiness.warming('outbox', 'replaying events of the last 10 minutes')
    expect(readiness.answer('gateway', health)).toBeNull()
    expect(readiness.decorate(health, { service: 'gateway', status: 'ok' })).toEqual({
      service: 'gateway',
      status: 'ok',
      warming: { outbox: 'replaying events of the last 10 minutes' },
    })
    expect(readiness.decorate(new Request('http://h/api/v1/x'), { a: 1 })).toBeUndefined()
    readiness.warmed('outbox')
    expect(readiness.decorate(health, { status: 'ok' })).toBeUndefined()
    expect(readiness.stillWarming()).toEqual({})
  })

  it('follows the supervisor: serving once the platform does, warming while workers start', () => {
    const readiness = createReadiness(['payment', 'workers', 'simulator'])
    followSupervisorReadiness(readiness)
    readiness.done('payment')
    expect(readiness.waiting()).toEqual(['workers', 'simulator'])
    process.emit('message' as never, { [PLATFORM_READY]: true, [WORKERS_STARTING]: 1 } as never)
    expect(readiness.waiting()).toEqual([])
    expect(readiness.stillWarming()).toEqual({ workers: '1 more worker starting' })
    process.emit('message' as never, { [WORKERS_STARTING]: 0 } as never)
    expect(readiness.stillWarming()).toEqual({})
  })
})
