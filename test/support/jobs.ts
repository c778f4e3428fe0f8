import { api, eventually } from './platform.ts'

/**
 * The outcome of a long operator action (a tier or instance move): its answer when it was quick,
 * or, when it answered 202 with a job, the job's result once it ended; `status` is the answer's,
 * or 200 for a job that succeeded and the problem's status for one that failed.
 *
 * @example
 * const moved = await outcome(p.gateway, token, await gw.put('/api/v1/tenants/acme/upgrade', body))
 */
export async function outcome(
  gateway: string,
  token: string,
  answer: { status: number; body: any },
  ms = 60_000,
): Promise<{ status: number; body: any }> {
  if (answer.status !== 202 || !String(answer.body?.id ?? '').startsWith('job_')) return answer
  const path = `/api/v1/tenants/${answer.body.tenant_id}/jobs/${answer.body.id}`
  const job = await eventually(
    async () => {
      const r = await api(gateway, token).get(path)
      return r.body?.status !== 'running' ? r.body : null
    },
    ms,
    `job ${answer.body.id}`,
  )
  return job.status === 'succeeded'
    ? { status: 200, body: job.result }
    : { status: job.error?.status ?? 500, body: job.error }
}
