import type { Job } from '../services/tenant/public.ts'
import { type CliApi, fail } from './client.ts'

/** What a long operator action answered 202 with (services/tenant/jobs.ts). */
export type JobOut = Pick<Job, 'id' | 'kind' | 'status' | 'result' | 'error'>

/** Asks for the job at once (`Prefer: respond-async`, RFC 7240): the command follows it itself. */
export const RESPOND_ASYNC = { prefer: 'respond-async' } as const

const isJob = (body: unknown): body is JobOut =>
  typeof (body as JobOut | null)?.id === 'string' && (body as JobOut).id.startsWith('job_')

/** How often a job is asked about: soon at first (most end within a second), then every half second. */
const pollMs = (polls: number) => (polls < 5 ? 100 : 500)

/**
 * The outcome of a long action the platform answered 202 for: follows its job (`GET path(id)`)
 * until it ends and returns its result, or fails (exit 1) with the job's problem. Progress goes to
 * stderr: on a terminal one line redrawn with the seconds; otherwise a line when it starts and
 * one every ten seconds, so a log shows the action went on. An answer that is not a job (the
 * action ended at once) is returned as it is.
 */
export async function followJob<T>(
  client: CliApi,
  answer: T | JobOut,
  opts: {
    path: (id: string) => string
    label: string
    /** What to do when the platform stopped while the job ran. */
    interrupted: string
  },
): Promise<T> {
  if (!isJob(answer)) return answer
  const { label } = opts
  const started = Date.now()
  const tty = process.stderr.isTTY
  let job: JobOut = answer
  let told = -1
  if (!tty) console.error(`${label}: running as job ${job.id}`)
  for (let polls = 0; job.status === 'running'; polls++) {
    const seconds = Math.floor((Date.now() - started) / 1000)
    if (tty) process.stderr.write(`\r${label}: still running (${seconds} s, job ${job.id})`)
    else if (seconds >= 10 && seconds % 10 === 0 && seconds !== told) {
      told = seconds
      console.error(`${label}: still running (${seconds} s)`)
    }
    await Bun.sleep(pollMs(polls))
    const r = await client
      .read<JobOut>(opts.path(job.id))
      .catch((err: Error & { code?: string }) =>
        fail(
          `${label}: the platform stopped answering while job ${job.id} ran (${err.code ?? err.message}); ${opts.interrupted}`,
        ),
      )
    if (r.status !== 200) fail(`${label}: following job ${job.id} answered ${r.status}`)
    job = r.body
  }
  if (tty) process.stderr.write('\n')
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  if (job.status === 'failed')
    fail(
      `${label} failed after ${seconds} s: ${job.error?.detail ?? 'see the log'} (${job.error?.code ?? 'INTERNAL'})`,
    )
  if (!tty) console.error(`${label}: done in ${seconds} s`)
  return job.result as T
}
