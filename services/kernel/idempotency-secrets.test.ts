import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { t } from 'elysia'
import { migrations } from '../../schema/auth/migrations.ts'
import { REPLAYED_HEADER } from './idempotency.ts'
import { createServiceApp } from './service.ts'
import { createTestKit } from './testing.ts'

const kit = await createTestKit('auth', { migrations })
afterAll(() => kit.cleanup())

let made = 0
const app = createServiceApp(kit.ctx, { title: 'Test' }).post(
  '/api/v1/test/keys',
  ({ body, set }) => {
    made++
    set.status = 201
    return {
      id: `key_${made}`,
      name: body.name,
      key: `mmp_sk_test_${crypto.randomUUID()}`,
      link: `https://mmp.test/#/accept?token=${crypto.randomUUID()}`,
    }
  },
  {
    auth: 'manage',
    idempotent: { shownOnce: ['key', 'link'] },
    body: t.Object({ name: t.String() }),
  },
)

const post = async (key: string) =>
  app.handle(
    new Request('http://localhost/api/v1/test/keys', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': key,
        ...(await kit.authFor({ tenantId: 'acme' })),
      },
      body: JSON.stringify({ name: 'server' }),
    }),
  )

/** Every file under a directory, as one latin1 string per file. */
const filesOf = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'))

describe('Idempotency-Key on a create that returns a secret', () => {
  it('shows the secret once and replays the answer without it, saying so', async () => {
    const before = made
    const first = await post('k-secret')
    expect(first.status).toBe(201)
    const shown = await first.json()
    expect(shown.key).toStartWith('mmp_sk_test_')
    const again = await post('k-secret')
    expect(again.status).toBe(201)
    expect(again.headers.get(REPLAYED_HEADER)).toBe('true')
    const replayed = await again.json()
    expect(replayed).toMatchObject({ id: shown.id, name: 'server' })
    expect(replayed.key).toBeUndefined()
    expect(replayed.link).toBeUndefined()
    expect(replayed.shown_once).toContain('shown once')
    // The handler ran once: the replay came from the stored answer.
    expect(made - before).toBe(1)
  })

  it('keeps no copy of the secret in any file of the data dir', async () => {
    const res = await post('k-secret-files')
    const { key, link } = await res.json()
    kit.registry.platform('auth').sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    const token = new URL(link.replace('#/', '')).searchParams.get('token')!
    const holding = filesOf(kit.dataDir).filter((f) => f.includes(key) || f.includes(token))
    expect(holding).toHaveLength(0)
  })
})
