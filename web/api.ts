import { PLATFORM_TENANT, type Role } from '../schema/vocabulary.ts'
/**
 * The dashboard's only way to the platform: the public API through the gateway, with the user's
 * access token, refreshed with the rotating refresh token when it expires.
 */
export interface Session {
  access_token: string
  refresh_token: string
  user: {
    id: string
    email: string
    role: Role
    tenant_id: string
  }
}

const KEY = 'mmp.session'
const TENANT_KEY = 'mmp.tenant'
let session: Session | null = JSON.parse(localStorage.getItem(KEY) ?? 'null')

export const currentSession = () => session
export const isOperator = () =>
  session?.user.tenant_id === PLATFORM_TENANT && session.user.role === 'Admin'

export function saveSession(s: Session | null): void {
  session = s
  if (s) localStorage.setItem(KEY, JSON.stringify(s))
  else {
    localStorage.removeItem(KEY)
    localStorage.removeItem(TENANT_KEY)
  }
}

/**
 * The tenant the views show: the user's own, or for the platform operator the one picked in the
 * header (null until one is picked: the operator then sees the tenant list).
 */
export function activeTenant(): string | null {
  if (!session) return null
  if (!isOperator()) return session.user.tenant_id
  return localStorage.getItem(TENANT_KEY)
}

export function pickTenant(id: string | null): void {
  if (id) localStorage.setItem(TENANT_KEY, id)
  else localStorage.removeItem(TENANT_KEY)
}

/** Adds `tenant_id` for the operator (the routes take it from the token for everyone else). */
export function scoped(path: string): string {
  const tenant = activeTenant()
  if (!isOperator() || !tenant) return path
  return `${path}${path.includes('?') ? '&' : '?'}tenant_id=${encodeURIComponent(tenant)}`
}

/** An RFC 9457 problem the API answered, as the dashboard shows it. */
export class Problem extends Error {
  readonly status: number
  readonly title: string
  readonly detail: string
  readonly errors?: { field: string; message: string }[]
  readonly code?: string
  readonly requestId?: string
  constructor(p: {
    status: number
    title: string
    detail: string
    errors?: { field: string; message: string }[]
    code?: string
    requestId?: string
  }) {
    super(p.detail)
    this.status = p.status
    this.title = p.title
    this.detail = p.detail
    this.errors = p.errors
    this.code = p.code
    this.requestId = p.requestId
  }
}

let refreshing: Promise<boolean> | null = null

/**
 * Trades the refresh token for a new session. Refresh tokens work once and a reused one revokes
 * the whole session, so requests that hit 401 together share one refresh.
 */
function refresh(): Promise<boolean> {
  if (!session?.refresh_token) return Promise.resolve(false)
  refreshing ??= (async () => {
    try {
      const res = await fetch('/api/v1/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: session?.refresh_token }),
      })
      if (!res.ok) return false
      saveSession((await res.json()) as Session)
      return true
    } catch {
      return false
    } finally {
      refreshing = null
    }
  })()
  return refreshing
}

async function raw(
  method: string,
  path: string,
  {
    body,
    refreshed = false,
    extra = {},
  }: {
    body?: unknown
    /** The session was just refreshed for this request: a second 401 signs out. */
    refreshed?: boolean
    /** Headers beside the token and the content type. */
    extra?: Record<string, string>
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...extra }
  const sent = session?.access_token
  if (session) headers.authorization = `Bearer ${session.access_token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status === 401 && !refreshed && session && !path.startsWith('/api/v1/auth/')) {
    // Another request may have refreshed already; otherwise refresh now.
    if (session.access_token !== sent || (await refresh()))
      return raw(method, path, { body, refreshed: true, extra })
  }
  if (res.status === 401 && session && !path.startsWith('/api/v1/auth/')) {
    saveSession(null)
    location.hash = '#/login'
  }
  if (!res.ok) {
    throw await problemOf(res)
  }
  return res
}

/** Reads an RFC 9457 problem from a failed response (or describes one that has none). */
async function problemOf(res: Response): Promise<Problem> {
  let p: {
    title?: string
    detail?: string
    code?: string
    request_id?: string
    errors?: { field: string; message: string }[]
  } = {}
  try {
    p = await res.json()
  } catch {}
  return new Problem({
    status: res.status,
    title: p.title ?? res.statusText,
    detail: p.detail ?? `request failed with ${res.status}`,
    errors: p.errors,
    code: p.code,
    requestId: p.request_id ?? res.headers.get('x-request-id') ?? undefined,
  })
}

export const api = {
  async get<T = unknown>(path: string): Promise<T> {
    return (await raw('GET', path)).json() as Promise<T>
  },
  async send<T = unknown>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const res = await raw(method, path, { body, extra: headers })
    return (res.status === 204 ? null : await res.json()) as T
  },
  /** Downloads a file the API returns (CSV, PDF) with the token attached. */
  async download(path: string, fileName: string): Promise<void> {
    const blob = await (await raw('GET', path)).blob()
    const a = document.createElement('a')
    a.href = URL.createObjectURL(blob)
    a.download = fileName
    a.click()
    setTimeout(() => URL.revokeObjectURL(a.href), 1000)
  },
}

export async function login(email: string, password: string): Promise<void> {
  const res = await fetch('/api/v1/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  })
  if (!res.ok) throw await problemOf(res)
  saveSession((await res.json()) as Session)
}

/** Redeems an invitation: sets the password (auth checks its strength) and signs in. */
export async function acceptInvite(token: string, password: string): Promise<void> {
  saveSession(null)
  const res = await fetch('/api/v1/auth/accept-invite', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password }),
  })
  if (!res.ok) throw await problemOf(res)
  saveSession((await res.json()) as Session)
}

/**
 * Posts a multipart form with upload progress (fetch reports none), refreshing the session once
 * on a 401 like every other call.
 */
export async function upload<T>(
  path: string,
  {
    form,
    onProgress,
    refreshed = false,
  }: {
    form: FormData
    onProgress: (sent: number, total: number) => void
    /** The session was just refreshed for this upload: a second 401 is final. */
    refreshed?: boolean
  },
): Promise<T> {
  const sent = session?.access_token
  const res = await new Promise<Response>((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', path)
    if (sent) xhr.setRequestHeader('authorization', `Bearer ${sent}`)
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0)
    xhr.onload = () =>
      resolve(
        new Response(xhr.status === 204 ? null : xhr.responseText, {
          status: xhr.status,
          headers: { 'content-type': xhr.getResponseHeader('content-type') ?? '' },
        }),
      )
    xhr.onerror = () => reject(new Error('the upload did not reach the platform'))
    xhr.send(form)
  })
  if (res.status === 401 && !refreshed && session) {
    if (session.access_token !== sent || (await refresh()))
      return upload(path, { form, onProgress, refreshed: true })
  }
  if (!res.ok) throw await problemOf(res)
  return (await res.json()) as T
}

export async function logout(): Promise<void> {
  const refreshToken = session?.refresh_token
  saveSession(null)
  if (refreshToken) {
    await fetch('/api/v1/auth/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    }).catch(() => {})
  }
}

/** The DESIGN §4 role matrix, for hiding what a role cannot use (the API enforces it anyway). */
export function can(action: 'analyze' | 'manage' | 'pay' | 'admin'): boolean {
  if (!session) return false
  if (isOperator()) return true
  const role = session.user.role
  if (action === 'analyze') return role !== 'Viewer'
  if (action === 'manage' || action === 'pay') return role === 'Admin' || role === 'Manager'
  return role === 'Admin'
}
