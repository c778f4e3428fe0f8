import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { consola } from 'consola'
import type { Config } from '../daemon/config.ts'

export const clientArgs = {
  url: { type: 'string', description: 'gateway URL (default http://127.0.0.1:<gateway port>)' },
} as const

export interface CliApi {
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>
}

/**
 * Admin commands act through the running platform's API as the platform operator, so they go
 * through the same validation, transactions and events as any client. Credentials come from
 * MMP_OPERATOR_EMAIL / MMP_OPERATOR_PASSWORD or the data dir's operator.txt.
 */
export async function operatorApi(config: Config, url?: string): Promise<CliApi> {
  const base = url ?? `http://127.0.0.1:${config.ports.gateway}`
  let email = config.get<string>('operator.email')
  let password = config.get<string | null>('operator.password')
  const file = join(config.dataDir, 'operator.txt')
  if (!password && existsSync(file)) {
    const text = readFileSync(file, 'utf8')
    email = /email: (.+)/.exec(text)?.[1]?.trim() ?? email
    password = /password: (.+)/.exec(text)?.[1]?.trim() ?? null
  }
  if (!password)
    fail(
      'no operator credentials: set MMP_OPERATOR_PASSWORD or run where data/operator.txt is readable',
    )
  let res: Response
  try {
    res = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    })
  } catch {
    fail(`the platform is not reachable at ${base}; start it with \`mmp serve\` or pass --url`)
  }
  const login = (await res.json()) as { access_token?: string; detail?: string }
  if (!res.ok || !login.access_token) fail(`operator login failed: ${login.detail ?? res.status}`)
  const token = login.access_token
  return {
    async call(method, path, body) {
      const r = await fetch(base + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      })
      const text = await r.text()
      const data = text ? safeJson(text) : null
      if (!r.ok)
        fail(`${method} ${path}: ${r.status} ${(data as { detail?: string })?.detail ?? text}`)
      return data as never
    },
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function fail(message: string): never {
  consola.error(message)
  process.exit(1)
}
