import type { Elysia } from 'elysia'
import { darajaError } from './model.ts'

/** A route path (`/mpesa/c2b/:version/registerurl`) as a pattern of request paths. */
const patternOf = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}/?$`)

/**
 * Daraja's answers to requests no API serves: a path it knows asked with another method is
 * `405 {errorCode: "405.001", errorMessage: "<METHOD> Method Not Allowed"}`, any other path
 * `404 {errorCode: "404.001.01", errorMessage: "Resource not found"}` (its error bodies, not the
 * framework's plain 404).
 */
export function withDarajaErrors<A extends Elysia<any, any, any, any, any, any, any>>(app: A): A {
  let known: Array<{ method: string; pattern: RegExp }> | null = null
  app.onError(({ code, request }) => {
    if (code !== 'NOT_FOUND') return
    known ??= app.routes.map((r) => ({ method: r.method, pattern: patternOf(r.path) }))
    const path = new URL(request.url).pathname
    const served = known.some((r) => r.method !== request.method && r.pattern.test(path))
    return served
      ? darajaError(405, '405.001', `${request.method} Method Not Allowed`)
      : darajaError(404, '404.001.01', 'Resource not found')
  })
  return app
}
