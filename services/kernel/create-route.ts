import type { TSchema } from 'elysia'
import type { Action } from './roles.ts'

/**
 * The options of a create route (DESIGN §11): an Admin's POST (or `auth`'s, e.g. the operator's),
 * idempotent under an Idempotency-Key, answering 201 with what it created. The handler answers
 * through `created`.
 *
 * @example
 * .post('/api/v1/things', async ({ body, actor, set }) => created(set, await createThing(...)),
 *   createRoute({ body: CreateThingBody, created: Thing, detail: { summary: 'Create a thing' } }))
 */
export function createRoute<
  B extends TSchema,
  C extends TSchema,
  D extends object,
  A extends Action = 'admin',
>({ body, created, detail, auth = 'admin' as A }: { body: B; created: C; detail: D; auth?: A }) {
  return {
    auth,
    idempotent: true as const,
    body,
    response: { 201: created },
    detail,
  }
}

/** 201 Created with `value` as the answer. */
export function created<T>(set: { status?: number | string }, value: T): T {
  set.status = 201
  return value
}
