import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ownerOf } from '../services/kernel/tenant-owner.ts'
import { api, eventually, OPERATOR } from './support/platform.ts'
import { type PartitionedPlatform, startPartitionedPlatform } from './support/split.ts'
import { createTenants } from './support/tenants.ts'

/** A tenant's analytics transactions in an instance's data dir (its own file, or the shared one). */
function transactionRows(dataDir: string, tenantId: string, plan: 'free' | 'pro'): number {
  const file = join(dataDir, 'tenants', plan === 'pro' ? tenantId : '_shared', 'analytics.db')
  if (!existsSync(file)) return 0
  const db = new Database(file, { readonly: true })
  try {
    return (
      db
        .query<{ n: number }, [string]>(
          'SELECT count(*) AS n FROM transactions WHERE tenant_id = ?',
        )
        .get(tenantId)?.n ?? 0
    )
  } finally {
    db.close()
  }
}

/** The files a tenant's handoff keeps in an instance's run/handoff (packed, or arriving). */
function handoffFiles(dataDir: string, tenantId: string): string[] {
  const dir = join(dataDir, 'run', 'handoff')
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.includes(`-${tenantId}-`)) : []
}

/**
 * DESIGN §12, tenants spread over instances: two analytics instances, each with its own data dir,
 * own disjoint halves of the tenants by rendezvous hashing. Every tenant's summary read through
 * the gateway is right, an instance refuses another's tenant with 421, and each instance's data
 * dir holds only its own tenants' rows and files.
 */
describe('analytics as two instances that each own half of the tenants', () => {
  let split: PartitionedPlatform
  type Placed = { id: string; plan: 'free' | 'pro'; owner: number; amounts: number[] }
  /** The tenants the reading tests share (nobody moves them): one Pro and two Free per instance. */
  const tenants: Placed[] = []
  /** Every tenant made so far, at the instance that holds it now (the move tests update it). */
  const placed = new Map<string, Placed>()

  /**
   * Tenants named `<prefix>-<n>` whose owners cover what `need` asks for (`'pro 0': 1` is one Pro
   * tenant on the first instance), whatever ports were drawn: created, known to both instances,
   * and with three rows each.
   */
  const makeTenants = async (prefix: string, need: Record<string, number>) => {
    const made: Placed[] = []
    const wanted = Object.values(need).reduce((a, b) => a + b, 0)
    for (let i = 0; made.length < wanted; i++) {
      const id = `${prefix}-${i}`
      const owner = split.instances.indexOf(ownerOf(id, split.instances))
      const plan = need[`pro ${owner}`]! > 0 ? 'pro' : need[`free ${owner}`]! > 0 ? 'free' : null
      if (!plan) continue
      need[`${plan} ${owner}`]!--
      made.push({ id, plan, owner, amounts: [100 + i, 2000 + 7 * i, -(30 + i)] })
    }
    const operator = await split.main.login()
    await createTenants(
      split.main.gateway,
      operator,
      ...made.map((t) => ({ id: t.id, plan: t.plan })),
    )
    // Each instance keeps its own copy of the profiles, from tenants.changed (daemon/profiles.ts):
    // nothing of the main data dir is copied.
    for (const instance of split.analytics) {
      await eventually(
        () =>
          made.every((t) => existsSync(join(instance.dataDir, 'tenants', t.id, 'placement.json'))),
        15_000,
        'every tenant profile on the instance',
      )
    }
    const day = new Date(Date.now() - 3 * 86_400_000).toISOString()
    for (const t of made) {
      const res = await api(split.main.gateway, operator).post('/api/v1/parser/transactions', {
        tenant_id: t.id,
        transactions: t.amounts.map((a, k) => ({
          occurred_at: day,
          amount: Math.abs(a),
          direction: a < 0 ? 'out' : 'in',
          description: `Row ${k} of ${t.id}`,
          receipt_number: `R${t.id.replace('-', '').toUpperCase()}${k}`,
        })),
      })
      expect(res.body).toMatchObject({ accepted: t.amounts.length })
      placed.set(t.id, t)
    }
    // In analytics before a test moves them (a row still on its way would be counted twice over).
    for (const t of made)
      await eventually(
        async () =>
          (
            await api(split.main.gateway, operator).get(
              `/api/v1/analytics/summary?tenant_id=${t.id}`,
            )
          ).body?.total_transactions === t.amounts.length,
        15_000,
        `the rows of ${t.id} in analytics`,
      )
    return made
  }

  beforeAll(async () => {
    split = await startPartitionedPlatform()
    tenants.push(
      ...(await makeTenants('shop', { 'pro 0': 1, 'free 0': 2, 'pro 1': 1, 'free 1': 2 })),
    )
  }, 120_000)
  afterAll(() => split?.dispose())

  it('answers each tenant its own summary through the gateway', async () => {
    for (const t of tenants) {
      const admin = api(
        split.main.gateway,
        await split.main.login(`owner@${t.id}.test`, `${t.id}-Owner-Passphrase-42`),
      )
      const totalIn = t.amounts.filter((a) => a > 0).reduce((a, b) => a + b, 0)
      const totalOut = -t.amounts.filter((a) => a < 0).reduce((a, b) => a + b, 0)
      const summary = await eventually(
        async () => {
          const res = await admin.get('/api/v1/analytics/summary')
          return res.body?.total_transactions === t.amounts.length ? res.body : undefined
        },
        15_000,
        `the summary of ${t.id}`,
      )
      expect(summary).toMatchObject({
        total_transactions: 3,
        total_in: totalIn,
        total_out: totalOut,
        net: totalIn - totalOut,
        total_amount: totalIn + totalOut,
        active_days: 1,
      })
    }
    // The operator reading for a tenant is routed by the tenant it names.
    const operator = api(split.main.gateway, await split.main.login())
    for (const t of tenants) {
      const res = await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)
      expect(res.status).toBe(200)
      expect(res.body.total_transactions).toBe(3)
    }
  })

  it('refuses a tenant at the instance that does not own it with 421 TENANT_ELSEWHERE', async () => {
    const t = tenants[0]!
    const token = await split.main.login(`owner@${t.id}.test`, `${t.id}-Owner-Passphrase-42`)
    const other = split.instances[1 - t.owner]!
    const res = await api(other, token).get('/api/v1/analytics/summary')
    expect(res.status).toBe(421)
    expect(res.body).toMatchObject({ code: 'TENANT_ELSEWHERE', tenant_id: t.id })
    expect(
      (await api(split.instances[t.owner]!, token).get('/api/v1/analytics/summary')).status,
    ).toBe(200)
  })

  it('verifies tokens with the key auth publishes (JWKS), holding no key file of its own', () => {
    for (const instance of split.analytics) {
      expect(existsSync(join(instance.dataDir, 'keys'))).toBe(false)
      expect(instance.logs()).toContain('mmp is up')
    }
  })

  it('keeps in each instance’s data dir only its own tenants’ files and rows', () => {
    for (const [i, instance] of split.analytics.entries()) {
      const root = join(instance.dataDir, 'tenants')
      const withFiles = readdirSync(root).filter((d) =>
        readdirSync(join(root, d)).some((f) => f.endsWith('.db')),
      )
      const all = [...placed.values()]
      const pro = all.filter((t) => t.owner === i && t.plan === 'pro').map((t) => t.id)
      expect(withFiles.sort()).toEqual([...pro, '_shared'].sort())
      const db = new Database(join(root, '_shared', 'analytics.db'), { readonly: true })
      try {
        const seen = new Set<string>()
        const tables = db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
        for (const { name } of tables) {
          const cols = db.query<{ name: string }, []>(`PRAGMA table_info("${name}")`).all()
          if (!cols.some((c) => c.name === 'tenant_id')) continue
          for (const r of db
            .query<{ tenant_id: string }, []>(`SELECT DISTINCT tenant_id FROM "${name}"`)
            .all())
            seen.add(r.tenant_id)
        }
        const free = all.filter((t) => t.owner === i && t.plan === 'free').map((t) => t.id)
        expect([...seen].sort()).toEqual(free.sort())
      } finally {
        db.close()
      }
    }
  })

  /**
   * `mmp …` as the operator of the main data dir, run beside the test (the load and the reads go
   * on meanwhile); killed at 60 s, so a move that hangs fails its test instead of the run.
   */
  const mmp = async (...args: string[]) => {
    const root = join(import.meta.dir, '..')
    const child = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), ...args], {
      timeout: 60_000,
      killSignal: 'SIGKILL',
      cwd: root,
      stdout: 'pipe',
      stderr: 'pipe',
      env: {
        ...process.env,
        MMP_PORT_OFFSET: String(split.main.offset),
        MMP_DATA_DIR: split.main.dataDir,
        MMP_OPERATOR_EMAIL: OPERATOR.email,
        MMP_OPERATOR_PASSWORD: OPERATOR.password,
      },
    })
    const [out, err, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    return { code: child.signalCode ? null : code, out, err }
  }
  /**
   * A move that went through: exit 0, and nothing on stderr but the progress of the job it runs
   * as (started, still running every ten seconds, done).
   */
  const expectMoved = (run: { code: number | null; err: string }) => {
    const progress = /: (running as job \S+|still running \(\d+ s\)|done in [\d.]+ s)$/
    const said = run.err.split('\n').filter((l) => l && !progress.test(l))
    expect({ code: run.code, err: said }).toEqual({ code: 0, err: [] })
  }
  /**
   * One row at a time for a tenant through the gateway (parser → categorizer → analytics events)
   * until stopped; `sent` counts the rows the parser accepted.
   */
  const writeLoad = (
    operator: ReturnType<typeof api>,
    tenantId: string,
    row: { prefix: string; amount: number; description: string },
  ) => {
    const day = new Date(Date.now() - 3 * 86_400_000).toISOString()
    let stop = false
    let sent = 0
    const done = (async () => {
      for (let k = 0; !stop; k++) {
        const res = await operator.post('/api/v1/parser/transactions', {
          tenant_id: tenantId,
          transactions: [
            {
              occurred_at: day,
              amount: row.amount,
              direction: 'in',
              description: `${row.description} ${k}`,
              receipt_number: `${row.prefix}${tenantId.replace('-', '').toUpperCase()}${k}`,
            },
          ],
        })
        expect(res.body).toMatchObject({ accepted: 1 })
        sent++
        // Paced: a steady trickle beside a move, not as many rows as the machine can take.
        await Bun.sleep(50)
      }
    })()
    return {
      sent: () => sent,
      stop: () => {
        stop = true
        return done
      },
    }
  }

  it('moves a Free and a Pro tenant to the other instance with mmp tenant move, under load', async () => {
    const mine = await makeTenants('mover', { 'free 0': 1, 'pro 0': 1 })
    const operator = api(split.main.gateway, await split.main.login())
    for (const plan of ['free', 'pro'] as const) {
      const t = mine.find((x) => x.plan === plan)!
      const [from, to] = split.analytics
      // Writes (parser → categorizer → analytics events) and reads through the gateway go on
      // while the tenant moves.
      const load = writeLoad(operator, t.id, {
        prefix: 'MV',
        amount: 10,
        description: 'During the move',
      })
      let stop = false
      const reads: number[] = []
      const reader = (async () => {
        while (!stop) {
          reads.push((await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)).status)
        }
      })()
      const halt = () => {
        stop = true
        return Promise.all([load.stop(), reader])
      }
      // Stopped however the test ends, so nothing of it runs on into the next test.
      try {
        await eventually(() => load.sent() >= 5, 10_000, 'the load under way')
        const moved = await mmp('tenant', 'move', t.id, '--to', split.instances[1], '--json')
        expectMoved(moved)
        const report = JSON.parse(moved.out)
        expect(report).toMatchObject({
          moved: true,
          from: split.instances[0],
          to: split.instances[1],
        })
        expect(report.rows).toBeGreaterThan(0)
        t.owner = 1
        const atMove = load.sent()
        await eventually(
          () => load.sent() >= atMove + 5,
          10_000,
          'the load going on after the move',
        )
      } finally {
        await halt()
      }

      // Every row sent before, during and after the move is counted once, on the new instance.
      const total = t.amounts.length + load.sent()
      const summary = await eventually(
        async () => {
          const res = await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)
          return res.body?.total_transactions === total ? res.body : undefined
        },
        20_000,
        `${total} transactions of ${t.id} on its new instance`,
      )
      expect(summary.total_transactions).toBe(total)
      expect(reads.filter((s) => s !== 200)).toEqual([])
      expect(reads.length).toBeGreaterThan(0)
      const direct = api(split.instances[1], await split.main.login())
      expect(
        (await direct.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)).body.total_transactions,
      ).toBe(total)

      // Its files and rows left the old instance; the new one holds them.
      const rowsOf = (dataDir: string) => transactionRows(dataDir, t.id, plan)
      expect(rowsOf(from.dataDir)).toBe(0)
      expect(rowsOf(to.dataDir)).toBe(total)
      if (plan === 'pro')
        expect(existsSync(join(from.dataDir, 'tenants', t.id, 'analytics.db'))).toBe(false)
      // The packed file was streamed to the new instance and removed once sent; nothing of it
      // stays on either side.
      for (const p of [from, to]) expect(handoffFiles(p.dataDir, t.id)).toEqual([])
    }
  }, 120_000)

  it('finishes a move whose old instance died mid-way when it is run again, losing no event', async () => {
    const t = (await makeTenants('crash', { 'free 0': 1 }))[0]!
    const operator = api(split.main.gateway, await split.main.login())
    const [from, to] = split.analytics
    const before = (await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)).body
    expect(before.total_transactions).toBe(t.amounts.length)
    const load = writeLoad(operator, t.id, {
      prefix: 'CR',
      amount: 5,
      description: 'Across a crash',
    })
    try {
      await eventually(() => load.sent() >= 5, 10_000, 'the load under way')
      // The old instance kills itself with the tenant fenced and packed, before answering.
      expect(await from.stop()).toBe(0)
      await from.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: 'handoff.after_pack' })
      const failed = await mmp('tenant', 'move', t.id, '--to', split.instances[1], '--json')
      expect(failed.code).not.toBe(0)
      expect(await from.exited()).toBe('SIGKILL')
      expect(from.logs()).toContain('fault point handoff.after_pack reached')
      // Killed with the tenant packed: its file stays behind until the instance starts again.
      expect(handoffFiles(from.dataDir, t.id)).not.toEqual([])
      const atCrash = load.sent()
      await eventually(
        () => load.sent() >= atCrash + 5,
        10_000,
        'writes while the instance is down',
      )
      await from.restart({ MMP_FAULT: '' })
      expect(handoffFiles(from.dataDir, t.id)).toEqual([])
      const atRestart = load.sent()
      await eventually(() => load.sent() >= atRestart + 5, 10_000, 'writes after it came back')

      const again = await mmp('tenant', 'move', t.id, '--to', split.instances[1], '--json')
      expectMoved(again)
      expect(JSON.parse(again.out)).toMatchObject({ moved: true, from: split.instances[0] })
      t.owner = 1
      const atMove = load.sent()
      await eventually(() => load.sent() >= atMove + 5, 10_000, 'writes after the move')
    } finally {
      await load.stop()
    }
    const total = t.amounts.length + load.sent()
    await eventually(
      async () =>
        (await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)).body
          ?.total_transactions === total,
      20_000,
      `all ${total} transactions of ${t.id}, each once, on its new instance`,
    )
    expect(transactionRows(from.dataDir, t.id, 'free')).toBe(0)
    expect(transactionRows(to.dataDir, t.id, 'free')).toBe(total)
  }, 120_000)

  it('finishes at its next start a move the tenant service died in: the tenant is fenced nowhere', async () => {
    // A Free tenant of the second instance, moving to the first.
    const t = (await makeTenants('fence', { 'free 1': 1 }))[0]!
    const [to, from] = split.analytics
    const before = t.amounts.length
    // The main process (tenant service, gateway) dies once the new instance pulled the tenant,
    // before the move is recorded: the old instance holds the tenant fenced.
    expect(await split.main.stop()).toBe(0)
    await split.main.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: 'tenant.handoff.after_pull' })
    const failed = await mmp('tenant', 'move', t.id, '--to', split.instances[0], '--json')
    expect(failed.code).not.toBe(0)
    expect(await split.main.exited()).toBe('SIGKILL')
    expect(split.main.logs()).toContain('fault point tenant.handoff.after_pull reached')
    await split.main.restart({ MMP_FAULT: '' })
    // This tenant's move: a start also finishes other moves still journalled as under way.
    await eventually(
      () =>
        split.main
          .logs()
          .split('\n')
          .some(
            (line) =>
              line.includes('a move between instances cut short was finished') &&
              line.includes(`"tenant_id":"${t.id}"`),
          ),
      30_000,
      'the move finished at start',
    )

    // The tenant stays on its old instance and takes writes at once, not after the fence lapses.
    const operator = api(split.main.gateway, await split.main.login())
    const day = new Date(Date.now() - 3 * 86_400_000).toISOString()
    const write = await operator.post('/api/v1/parser/transactions', {
      tenant_id: t.id,
      transactions: [
        {
          occurred_at: day,
          amount: 9,
          direction: 'in',
          description: 'After the cut',
          receipt_number: `CUT${t.id.replace('-', '').toUpperCase()}`,
        },
      ],
    })
    expect(write.status).toBe(200)
    const summary = async () =>
      (await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)).body?.total_transactions
    await eventually(async () => (await summary()) === before + 1, 20_000, 'the write applied')
    expect(transactionRows(from.dataDir, t.id, 'free')).toBe(before + 1)
    // What the new instance pulled is gone from it.
    expect(transactionRows(to.dataDir, t.id, 'free')).toBe(0)

    // Run again, the move goes through.
    const again = await mmp('tenant', 'move', t.id, '--to', split.instances[0], '--json')
    if (again.code !== 0) {
      // What each process was doing, for a move that failed or did not end in time.
      // The gateway's request lines left out: the CLI following the job fills them.
      console.error(`--- mmp tenant move: exit ${again.code}\n${again.out}\n${again.err}`)
      for (const [name, p] of [
        ['main', split.main],
        ['to', to],
        ['from', from],
      ] as const) {
        const lines = p.logs().split('\n')
        const told = lines.filter((l) => !l.includes('"msg":"request"')).slice(-80)
        console.error(`--- ${name}\n${told.join('\n')}`)
      }
    }
    expectMoved(again)
    t.owner = 0
    await eventually(async () => (await summary()) === before + 1, 20_000, 'read on the new one')
    expect(transactionRows(to.dataDir, t.id, 'free')).toBe(before + 1)
    expect(transactionRows(from.dataDir, t.id, 'free')).toBe(0)
  }, 120_000)
})
