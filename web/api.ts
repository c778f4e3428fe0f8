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
    role: 'Admin' | 'Manager' | 'Analyst' | 'Viewer'
    tenant_id: string
  }
}

const KEY = 'mmp.session'
let session: Session | null = JSON.parse(localStorage.getItem(KEY) ?? 'null')

export const currentSession = () => session
export const isOperator = () =>
  session?.user.tenant_id === 'platform' && session.user.role === 'Admin'

export function saveSession(s: Session | null): void {
  session = s
  if (s) localStorage.setItem(KEY, JSON.stringify(s))
  else localStorage.removeItem(KEY)
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors?: { field: string; message: string }[],
  ) {
    super(detail)
  }
}

async function refresh(): Promise<boolean> {
  if (!session?.refresh_token) return false
  const res = await fetch('/api/v1/auth/refresh', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: session.refresh_token }),
  })
  if (!res.ok) return false
  saveSession((await res.json()) as Session)
  return true
}

async function raw(method: string, path: string, body?: unknown, retry = true): Promise<Response> {
  const headers: Record<string, string> = {}
  if (session) headers.authorization = `Bearer ${session.access_token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status === 401 && retry && session && (await refresh()))
    return raw(method, path, body, false)
  if (res.status === 401 && session && !path.startsWith('/api/v1/auth/')) {
    saveSession(null)
    location.hash = '#/login'
  }
  if (!res.ok) {
    let p: { title?: string; detail?: string; errors?: { field: string; message: string }[] } = {}
    try {
      p = await res.json()
    } catch {}
    throw new Problem(
      res.status,
      p.title ?? res.statusText,
      p.detail ?? `request failed with ${res.status}`,
      p.errors,
    )
  }
  return res
}

export const api = {
  async get<T = any>(path: string): Promise<T> {
    return (await raw('GET', path)).json() as Promise<T>
  },
  async send<T = any>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const res = await raw(method, path, body)
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
  const body = await res.json()
  if (!res.ok)
    throw new Problem(res.status, body.title ?? 'Error', body.detail ?? 'login failed', body.errors)
  saveSession(body as Session)
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
