import { type ConsolaInstance, createConsola, type LogObject } from 'consola'

/**
 * Loggers: pretty on a terminal, one JSON object per line otherwise. Pass structured fields as
 * the last argument; `request_id` belongs on every line written while serving a request.
 *
 * @example
 * const log = createLogger('payment'); log.info('callback accepted', { request_id, checkout_id })
 */
export type Logger = ConsolaInstance

const levels: Record<string, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4 }

let jsonLines = !process.stdout.isTTY
let level = 3
const loggers: Logger[] = []

function jsonReporter(obj: LogObject): void {
  const line: Record<string, unknown> = {
    time: obj.date.toISOString(),
    level: obj.type,
    service: obj.tag || undefined,
  }
  const messages: string[] = []
  for (const a of obj.args) {
    if (a instanceof Error) line.error = a.message
    else if (a && typeof a === 'object') Object.assign(line, a)
    else messages.push(String(a))
  }
  line.msg = messages.join(' ')
  const out = obj.level <= 1 ? process.stderr : process.stdout
  out.write(`${JSON.stringify(line)}\n`)
}

export function createLogger(tag: string): Logger {
  const logger = createConsola({
    level,
    ...(jsonLines ? { reporters: [{ log: jsonReporter }] } : {}),
  }).withTag(tag)
  loggers.push(logger)
  return logger
}

/** Set once by the daemon from validated config. */
export function configureLogging(opts: { level: string; json?: boolean }): void {
  level = levels[opts.level] ?? 3
  if (opts.json !== undefined) jsonLines = opts.json
  for (const l of loggers) {
    l.level = level
    if (jsonLines) l.setReporters([{ log: jsonReporter }])
  }
}
