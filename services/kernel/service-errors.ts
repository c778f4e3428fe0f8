import { allowedMethods } from '../../schema/routes.ts'
import { payloadTooLarge } from './body-limit.ts'
import type { ServiceContext } from './context.ts'
import { AppError, MethodNotAllowed } from './errors.ts'
import { isValidRequestId, newRequestId } from './ids.ts'
import {
  appErrorResponse,
  fieldErrorsOf,
  problemResponse,
  queryParameterOf,
  type SchemaIssue,
  storageError,
} from './problem.ts'

/** What the error hook is given (the parts read here). */
export interface ErrorContext {
  code: string | number
  error: unknown
  request: Request
  [key: string]: unknown
}

/** The caller's request id when it is a valid one, otherwise a new one. */
export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id')
  return isValidRequestId(given) ? given : newRequestId()
}

/**
 * The service app's error hook: every error as problem+json (DESIGN §6), Elysia's own included.
 * A parse error of a body that went past its limit (`overLimit`) is really a 413.
 */
export function errorAnswerer({
  ctx,
  limitOf,
  overLimit,
}: {
  ctx: ServiceContext<unknown>
  limitOf: (request: Request) => number
  overLimit: WeakMap<Request, () => boolean>
}) {
  return ({ code, error, request, ...rest }: ErrorContext): Response => {
    const requestId = (rest as { requestId?: string }).requestId ?? requestIdOf(request)
    if (error instanceof AppError) return appErrorResponse(error, requestId)
    if (overLimit.get(request)?.())
      return appErrorResponse(payloadTooLarge(limitOf(request)), requestId)
    const storage = storageError(error)
    if (storage) {
      ctx.log.warn('storage error', {
        request_id: requestId,
        path: new URL(request.url).pathname,
        code: storage.code,
        error: (error as Error)?.message,
      })
      return appErrorResponse(storage, requestId)
    }
    switch (code) {
      case 'VALIDATION': {
        const v = error as unknown as { type?: string; value?: unknown; all: SchemaIssue[] }
        // A numeric query value that fails its bounds arrives as type 'property' with no name:
        // the parameter is found by its value.
        const whole =
          v.type === 'property' ? queryParameterOf(request, v.value) : `(${v.type ?? 'body'})`
        const errors = fieldErrorsOf(v.all ?? [], whole)
        return problemResponse(
          {
            status: 422,
            code: 'VALIDATION_FAILED',
            detail:
              errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'the request is invalid',
            errors,
          },
          requestId,
        )
      }
      case 'PARSE':
        return problemResponse(
          {
            status: 400,
            code: 'MALFORMED_BODY',
            detail: 'the request body could not be parsed',
          },
          requestId,
        )
      case 'NOT_FOUND': {
        const path = new URL(request.url).pathname
        const allowed = allowedMethods(path)
        if (allowed.length)
          return appErrorResponse(new MethodNotAllowed(request.method, path, allowed), requestId)
        return problemResponse(
          { status: 404, code: 'NOT_FOUND', detail: `no route for ${request.method} ${path}` },
          requestId,
        )
      }
      default: {
        const status = (error as { status?: number }).status
        if (typeof status === 'number' && status >= 400 && status < 500) {
          return problemResponse(
            {
              status,
              code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST',
              detail: String((error as Error).message ?? 'bad request'),
            },
            requestId,
          )
        }
        ctx.log.error('unhandled error', {
          request_id: requestId,
          path: new URL(request.url).pathname,
          error: (error as Error)?.message,
          stack: (error as Error)?.stack,
        })
        return problemResponse(
          { status: 500, code: 'INTERNAL', detail: 'an internal error occurred' },
          requestId,
        )
      }
    }
  }
}
