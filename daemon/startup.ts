import { join } from 'node:path'
import { configureFaults, FAULT_POINTS } from '../services/kernel/faults.ts'
import { configureLogging, createLogger, type Logger } from '../services/kernel/log.ts'
import type { WorkerRole } from './background.ts'
import type { Config } from './config.ts'

/** Logging as configured, and the last-resort handlers; the logger of the daemon itself. */
export function startLogging(config: Config): { log: Logger; format: string } {
  const format = config.get<string>('log.format')
  configureLogging({
    level: config.get('log.level'),
    json: format === 'auto' ? !process.stdout.isTTY : format === 'json',
  })
  const log = createLogger('mmp')
  guardProcess(log)
  return { log, format }
}

/**
 * The line an operator reads first: where the dashboard and the API docs are, and where the
 * operator password is. One line on a terminal; fields of one JSON line otherwise.
 */
export function logStarted({
  config,
  log,
  gateway,
  format,
  workers = 1,
}: {
  config: Config
  log: Logger
  gateway: string | undefined
  format: string
  workers?: number
}) {
  const host = ['0.0.0.0', '::', '127.0.0.1'].includes(config.gatewayHost)
    ? 'localhost'
    : config.gatewayHost
  const dashboard = gateway ? `http://${host}:${config.ports.gateway}/` : undefined
  const password = config.get<string | null>('operator.password')
    ? 'MMP_OPERATOR_PASSWORD'
    : join(config.dataDir, 'operator.txt')
  const json = format === 'auto' ? !process.stdout.isTTY : format === 'json'
  if (json)
    return log.info('mmp is up', {
      gateway,
      dashboard,
      docs: dashboard && `${dashboard}docs`,
      operator_password: password,
      data_dir: config.dataDir,
      parts: config.only.join(','),
      workers,
    })
  const where = dashboard
    ? `dashboard ${dashboard} · API docs ${dashboard}docs · operator password in ${password}`
    : `parts ${config.only.join(',')}`
  const across = workers > 1 ? ` · ${workers} workers` : ''
  log.info(`mmp is up: ${where} · data in ${config.dataDir}${across}`)
}

let guarded = false
/**
 * The last resort (DESIGN §15): an exception nobody caught is logged, not fatal. Every loop catches
 * its own errors; this keeps one that slipped through from taking every service down with it.
 */
function guardProcess(log: Logger): void {
  if (guarded) return
  guarded = true
  process.on('uncaughtException', (err) =>
    log.error('uncaught exception; carrying on', {
      error: (err as Error)?.message,
      stack: (err as Error)?.stack,
    }),
  )
  process.on('unhandledRejection', (reason) =>
    log.error('unhandled rejection; carrying on', {
      error: (reason as Error)?.message ?? String(reason),
      stack: (reason as Error)?.stack,
    }),
  )
}

/** MMP_FAULT arms a crash point only with MMP_ALLOW_FAULTS=1; otherwise one warning line. */
export function armFaults(config: Config, log: Logger, worker: WorkerRole | undefined): void {
  const point = config.get<string | null>('faults.point')
  const allowed = config.get<boolean>('faults.allow')
  if (point && !allowed)
    log.warn('MMP_FAULT is ignored without MMP_ALLOW_FAULTS=1', { fault: point })
  else if (point && !(FAULT_POINTS as readonly string[]).includes(point))
    log.warn('MMP_FAULT names no known fault point', {
      fault: point,
      known: FAULT_POINTS.join(','),
    })
  configureFaults(point && allowed ? point : null, {
    supervisor: worker ? process.ppid : undefined,
  })
}

/**
 * Times the named steps of one process's start-up, logged at debug level as one line once the
 * process serves (`MMP_LOG_LEVEL=debug` says where a slow start spent its time). `process_ms`
 * counts from the process's own start, so it includes loading the code.
 *
 * @example
 * const steps = startupSteps(log)
 * const broker = await steps.time('broker', () => startEmbeddedBroker(base))
 * steps.report('serving')
 */
export function startupSteps(log: Logger) {
  const began = performance.now()
  const took: Record<string, number> = {}
  return {
    async time<T>(step: string, work: () => T | Promise<T>): Promise<T> {
      const start = performance.now()
      try {
        return await work()
      } finally {
        took[`${step}_ms`] = Math.round(performance.now() - start)
      }
    },
    report(what: string) {
      log.debug(`start-up: ${what}`, {
        process_ms: Math.round(performance.now()),
        steps_ms: Math.round(performance.now() - began),
        ...took,
      })
    },
  }
}
