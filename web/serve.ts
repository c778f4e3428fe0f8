import { dashboardRoutes } from './routes.ts'

/**
 * What a browser is told about the dashboard: it runs only its own scripts and styles, loads
 * nothing from elsewhere, cannot be framed (clickjacking) and leaks no URL in a Referer. The
 * dashboard keeps its tokens in localStorage, so script injection is the threat that matters.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

export interface DashboardOptions {
  /** `max-age` in seconds for Strict-Transport-Security; 0 sends none (plain HTTP installs). */
  hstsMaxAgeS?: number
}

export interface Dashboard {
  /** Whether a request is for the dashboard (its page or a bundled asset) and not the API. */
  handles(request: Request): boolean
  fetch(request: Request): Promise<Response>
  /**
   * Resolves once the bundle is built. Bun builds it on the first request for the page; workers
   * sharing the port each have their own server, and a page from one asking another for a chunk
   * that one had not built yet got a 404.
   */
  ready: Promise<void>
  stop(): void
}

/** The bundle's files at the root: `/chunk-<hash>.js|css`, plus Bun's own asset paths. */
const ASSET = /^\/(?:chunk-[a-z0-9]+\.(?:js|css|map)|_bun\/.+)$/

/** Headers every dashboard answer carries. */
export function securityHeaders(opts: DashboardOptions = {}): Record<string, string> {
  return {
    'content-security-policy': DASHBOARD_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    ...(opts.hstsMaxAgeS ? { 'strict-transport-security': `max-age=${opts.hstsMaxAgeS}` } : {}),
  }
}

/**
 * Serves the dashboard Bun bundled from index.html (in `dist/mmp` too) with security headers.
 * Bun serves an HTML bundle only as a route of its own server and lets no header be added there,
 * so the bundle runs on a private loopback server and each answer is copied with the headers.
 *
 * @example
 * const dashboard = startDashboard({ hstsMaxAgeS: 0 })
 * Bun.serve({ fetch: (req) => (dashboard.handles(req) ? dashboard.fetch(req) : api(req)) })
 */
export function startDashboard(opts: DashboardOptions = {}): Dashboard {
  const inner = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    development: false,
    routes: dashboardRoutes,
    fetch: () => new Response('not found', { status: 404 }),
  })
  const extra = securityHeaders(opts)
  const ready = fetch(`http://127.0.0.1:${inner.port}/`).then(
    (res) => void res.arrayBuffer(),
    () => {},
  )
  return {
    ready,
    handles(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false
      const { pathname } = new URL(request.url)
      return pathname === '/' || pathname === '/index.html' || ASSET.test(pathname)
    },
    async fetch(request) {
      const url = new URL(request.url)
      const upstream = await fetch(`http://127.0.0.1:${inner.port}${url.pathname}`, {
        method: request.method,
        headers: pick(request.headers, ['if-none-match']),
      })
      const headers = new Headers(upstream.headers)
      for (const [k, v] of Object.entries(extra)) headers.set(k, v)
      return new Response(upstream.body, { status: upstream.status, headers })
    },
    stop() {
      inner.stop(true)
    },
  }
}

function pick(from: Headers, names: string[]): Headers {
  const out = new Headers()
  for (const n of names) {
    const v = from.get(n)
    if (v !== null) out.set(n, v)
  }
  return out
}
