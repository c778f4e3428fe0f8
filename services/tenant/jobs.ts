import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { replaceJson } from '../../tenants/json-file.ts'
import { processAlive } from '../../tenants/process-alive.ts'
import { AppError, NotFound, statusOf } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { storageError } from '../kernel/problem.ts'
import type { JobView } from './model.ts'

/**
 * A long operator action (a tier move, an instance move, a backup) followed as a job: it answers at once
 * when it is quick, and 202 with a job to follow (`GET /tenants/{id}/jobs/{job}`) when it is
 * not, so a move never meets the gateway's budget as a 504 while it goes on (as Stripe and
 * GitHub answer 202 for work they finish later). The job lives in a small JSON file under
 * `run/jobs/` of the data dir, so any worker answers for it; one whose process died is reported
 * `failed` (interrupted): the move itself resumes or rolls back where it stopped.
 */
export type Job = typeof JobView.static
type Stored = Job & { pid: number }

/**
 * What a job's work may ask of it: whether its request has already been answered 202. Until then
 * the calls it makes carry the request's deadline; after, nobody waits on that deadline, and each
 * call has the client's own timeout (`callOf` in routes-common.ts).
 */
export interface JobTurn {
  detached(): boolean
}

/** Finished jobs are kept this long, then pruned as new ones start. */
const KEEP_MS = 24 * 3600_000
/** How long a request waits for the work before it answers 202 with the job. */
export const DEFAULT_WAIT_MS = 3000

/** What a failed job says: the problem its request would have answered with. */
function problemOf(err: unknown): NonNullable<Job['error']> {
  const known = err instanceof AppError ? err : storageError(err)
  if (known) return { status: statusOf[known.code], code: known.code, detail: known.detail }
  return { status: 500, code: 'INTERNAL', detail: 'the job failed; the log says why' }
}

export function createJobs(dataDir: string, now: () => Date = () => new Date()) {
  const dir = join(dataDir, 'run', 'jobs')
  const file = (id: string) => join(dir, `${id}.json`)
  const save = (job: Stored) => replaceJson(file(job.id), job)
  const prune = () => {
    const cutoff = Date.now() - KEEP_MS
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      try {
        if (statSync(path).mtimeMs < cutoff) rmSync(path, { force: true })
      } catch {}
    }
  }
  const view = ({ pid: _pid, ...job }: Stored): Job => job

  return {
    /**
     * Runs `work` as a job of the tenant. Resolves to its value when it ends within `waitMs`
     * (its error is thrown then, as a plain request's would be); otherwise to the running job,
     * which records the outcome when the work ends.
     */
    async run<T>(
      kind: Job['kind'],
      tenantId: string,
      work: (turn: JobTurn) => Promise<T>,
      waitMs = DEFAULT_WAIT_MS,
    ): Promise<{ done: true; value: T } | { done: false; job: Job }> {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      prune()
      const at = now().toISOString()
      const job: Stored = {
        id: newId('job'),
        kind,
        tenant_id: tenantId,
        status: 'running',
        created_at: at,
        updated_at: at,
        finished_at: null,
        result: null,
        error: null,
        pid: process.pid,
      }
      save(job)
      const finish = (patch: Partial<Job>) => {
        const end = now().toISOString()
        save({ ...job, ...patch, updated_at: end, finished_at: end })
      }
      let detached = waitMs <= 0
      const running = work({ detached: () => detached }).then(
        (value) => {
          finish({ status: 'succeeded', result: value as unknown })
          return value
        },
        (err: unknown) => {
          finish({ status: 'failed', error: problemOf(err) })
          throw err
        },
      )
      // Asked for the job at once (respond-async): answer it even when the work would be quick.
      if (detached) {
        running.catch(() => {})
        return { done: false, job: view(job) }
      }
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), waitMs)
      })
      try {
        const first = await Promise.race([running.then((value) => ({ value })), late])
        if (first) return { done: true, value: first.value }
      } finally {
        clearTimeout(timer)
      }
      // Answered 202: the outcome is the job's now, and an error is not the request's.
      detached = true
      running.catch(() => {})
      return { done: false, job: view(job) }
    },
    /** A job of the tenant; 404 for another tenant's or one long gone. */
    get(tenantId: string, id: string): Job {
      const path = /^job_[0-9a-f]{32}$/.test(id) ? file(id) : null
      if (!path || !existsSync(path)) throw new NotFound(`no job ${id}`)
      const job = JSON.parse(readFileSync(path, 'utf8')) as Stored
      if (job.tenant_id !== tenantId) throw new NotFound(`no job ${id}`)
      if (job.status === 'running' && job.pid !== process.pid && !processAlive(job.pid)) {
        const detail =
          job.kind === 'backup'
            ? 'the process running it stopped; start the backup again'
            : 'the process running it stopped; the move resumes or rolls back on restart'
        return {
          ...view(job),
          status: 'failed',
          error: { status: 503, code: 'STORAGE_UNAVAILABLE', detail },
        }
      }
      return view(job)
    },
  }
}

export type Jobs = ReturnType<typeof createJobs>

/** What a request hands to its job: the work, and where to answer 202 when it takes longer. */
export interface JobRequest<T> {
  set: { status?: number | string; headers: Record<string, string | number> }
  request: Request
  kind: Job['kind']
  tenantId: string
  work: (turn: JobTurn) => Promise<T>
}

/**
 * A request's work run as a job: its value when it ends in time, otherwise 202 with the running
 * job, `Location` naming where to follow it (`GET /api/v1/tenants/{tenant}/jobs/{job}`).
 */
export async function answerAsJob<T>(
  jobs: Jobs,
  { set, request, kind, tenantId, work }: JobRequest<T>,
): Promise<T | Job> {
  const r = await jobs.run(kind, tenantId, work, waitFor(request))
  if (r.done) return r.value
  set.status = 202
  set.headers.location = `/api/v1/tenants/${tenantId}/jobs/${r.job.id}`
  set.headers['retry-after'] = '1'
  return r.job
}

/**
 * How long a request waits before it answers 202: `Prefer: respond-async` (RFC 7240) asks for
 * the job at once; otherwise a few seconds, and always well inside the caller's deadline.
 */
export function waitFor(request: Request): number {
  if (/\brespond-async\b/i.test(request.headers.get('prefer') ?? '')) return 0
  const deadline = Number(request.headers.get('x-request-deadline'))
  if (!Number.isFinite(deadline) || deadline <= 0) return DEFAULT_WAIT_MS
  return Math.max(0, Math.min(DEFAULT_WAIT_MS, (deadline - Date.now()) / 2))
}
