import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AppError } from '../kernel/errors.ts'
import { eventually } from '../kernel/testing.ts'
import { createJobs, waitFor } from './jobs.ts'

describe('jobs for long operator actions', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-jobs-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const jobs = createJobs(dir)

  it('answers with the work itself when it ends in time', async () => {
    const r = await jobs.run('tier_move', 'acme', async () => ({ moved_rows: 3 }), 1000)
    expect(r).toEqual({ done: true, value: { moved_rows: 3 } })
  })

  it('throws the error of work that fails in time, as the request would', async () => {
    const failing = jobs.run(
      'tier_move',
      'acme',
      () => Promise.reject(new AppError('CONFLICT', 'busy')),
      1000,
    )
    await expect(failing).rejects.toThrow('busy')
  })

  it('answers with a running job when the work takes longer, and records how it ended', async () => {
    let finish = () => {}
    const work = new Promise<{ rows: number }>((resolve) => {
      finish = () => resolve({ rows: 20_000 })
    })
    const r = await jobs.run('instance_move', 'acme', () => work, 10)
    if (r.done) throw new Error('the work was not done yet')
    expect(r.job).toMatchObject({ kind: 'instance_move', tenant_id: 'acme', status: 'running' })
    expect(jobs.get('acme', r.job.id).status).toBe('running')
    finish()
    await eventually(() => jobs.get('acme', r.job.id).status === 'succeeded', 2000, 'the job ends')
    expect(jobs.get('acme', r.job.id)).toMatchObject({ result: { rows: 20_000 }, error: null })
  })

  it('records a late failure as the problem the request would have answered', async () => {
    const r = await jobs.run(
      'tier_move',
      'acme',
      async () => {
        await Bun.sleep(50)
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      },
      0,
    )
    if (r.done) throw new Error('the work was not done yet')
    await eventually(() => jobs.get('acme', r.job.id).status === 'failed', 2000, 'the job fails')
    expect(jobs.get('acme', r.job.id).error).toMatchObject({ status: 507, code: 'STORAGE_FULL' })
  })

  it('shows a tenant only its own jobs, and says a job whose process died failed', async () => {
    const r = await jobs.run('tier_move', 'acme', () => new Promise(() => {}), 0)
    if (r.done) throw new Error('never done')
    expect(() => jobs.get('beta', r.job.id)).toThrow('no job')
    expect(() => jobs.get('acme', 'job_../../x')).toThrow('no job')
    const file = join(dir, 'run', 'jobs', `${r.job.id}.json`)
    const stored = JSON.parse(readFileSync(file, 'utf8'))
    // A pid no process has (above the kernel's pid_max).
    writeFileSync(file, JSON.stringify({ ...stored, pid: 2 ** 22 + 1 }))
    expect(jobs.get('acme', r.job.id)).toMatchObject({ status: 'failed', error: { status: 503 } })
    expect(readdirSync(join(dir, 'run', 'jobs')).length).toBeGreaterThan(0)
  })

  it('waits a few seconds, none with Prefer: respond-async, and never past half the deadline', () => {
    expect(waitFor(new Request('http://h/'))).toBe(3000)
    expect(waitFor(new Request('http://h/', { headers: { prefer: 'respond-async' } }))).toBe(0)
    const soon = String(Date.now() + 2000)
    expect(
      waitFor(new Request('http://h/', { headers: { 'x-request-deadline': soon } })),
    ).toBeLessThanOrEqual(1000)
  })
})
