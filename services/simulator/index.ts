import { Elysia } from 'elysia'

/** The Daraja-compatible M-Pesa simulator (DESIGN §8). */
export function createSimulator(_opts: { delayMs: number; version: string }) {
  return new Elysia({ name: 'mmp-simulator' }).get('/health', () => ({
    service: 'simulator',
    version: _opts.version,
    status: 'ok',
    checks: {},
  }))
}
