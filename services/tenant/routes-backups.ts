import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { AppError, invalidField } from '../kernel/errors.ts'
import { storageError } from '../kernel/problem.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { answerAsJob, type Jobs } from './jobs.ts'
import { BackupWritten, JobView } from './model.ts'
import { secured } from './routes-common.ts'
import type { TenantSettings, WrittenBackup } from './settings.ts'

/**
 * `POST /api/v1/backups`: the operator takes a backup of the running platform. It is written
 * only into the configured backup folder (`backup.dir`; no path comes from the request) by the
 * same run as the daemon's schedule, and answered like the moves: the outcome when it ends
 * within a few seconds, otherwise 202 with a job of tenant `platform` to follow
 * (`GET /api/v1/tenants/platform/jobs/{job}`), never a 504 while the copy goes on.
 */
export function backupRoutes({
  app,
  ctx,
  jobs,
  backup,
}: {
  app: ServiceApp
  ctx: ServiceContext
  jobs: Jobs
  backup: TenantSettings['backup']
}) {
  return app.post(
    '/api/v1/backups',
    ({ body, request, set }) => {
      const named = Object.keys(body ?? {})[0]
      if (named)
        throw invalidField(
          named,
          'a backup takes no fields: it is written into the configured backup.dir (set backup.dir to choose the folder)',
        )
      if (!backup)
        throw new AppError('SERVICE_UNAVAILABLE', 'this part of the platform cannot take backups')
      return answerAsJob(jobs, {
        set,
        request,
        kind: 'backup',
        tenantId: PLATFORM_TENANT,
        work: () => takeBackup(ctx, backup),
      })
    },
    {
      auth: 'operator',
      idempotent: true,
      // Nothing to choose: a body naming a folder is refused rather than silently ignored.
      body: t.Optional(
        t.Record(t.String(), t.Unknown(), {
          description: 'empty: the backup goes to backup.dir, never to a folder a request names',
        }),
      ),
      response: { 200: BackupWritten, 202: JobView },
      detail: secured(
        'Take a backup into the configured backup.dir (operator; 202 with a job of tenant platform when it takes longer; Prefer: respond-async asks for the job at once)',
      ),
    },
  )
}

/** One backup; a failure becomes the problem its job reports (503, or 507 when the disk is full). */
async function takeBackup(
  ctx: ServiceContext,
  backup: () => Promise<WrittenBackup>,
): Promise<WrittenBackup> {
  try {
    const written = await backup()
    ctx.log.info('backup written', {
      backup: written.path,
      files: written.files,
      bytes: written.bytes,
      duration_ms: written.duration_ms,
      pruned: written.pruned,
    })
    return written
  } catch (err) {
    const message = (err as Error)?.message ?? String(err)
    ctx.log.warn('backup failed', { error: message })
    if (err instanceof AppError) throw err
    throw (
      storageError(err) ??
      new AppError(
        'STORAGE_UNAVAILABLE',
        `the backup was not written (${message}); make backup.dir a folder mmp can write to, with room for a copy of the data dir, then start it again`,
        { headers: { 'Retry-After': '60' } },
      )
    )
  }
}
