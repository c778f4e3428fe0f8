import { join } from 'node:path'
import type { Logger } from '../services/kernel/log.ts'
import { createSimulator } from '../services/simulator/index.ts'
import type { Config } from './config.ts'
import { version } from './version.ts'

/** The M-Pesa simulator as configured, with its state kept in the data dir. */
export function simulatorOf(config: Config) {
  return createSimulator({
    delayMs: config.get('mpesa.simulator_delay_ms'),
    version,
    consumerKey: config.get('mpesa.consumer_key'),
    consumerSecret: config.get('mpesa.consumer_secret'),
    shortcode: config.get('mpesa.shortcode'),
    passkey: config.get('mpesa.passkey'),
    statePath: join(config.dataDir, 'simulator', 'requests.db'),
    production: config.get('mpesa.simulator_production'),
  })
}

/**
 * Starts the one simulator of this host on its port, or, when it only comes along with payment
 * (`implied`) and another process already serves that port, uses that one and returns null.
 * On the services' address (`host`), where payment looks for it (`simulatorUrl`) and a
 * simulator on a host of its own is reached. Never with SO_REUSEPORT: two simulators sharing a port would each know only the requests
 * (and OAuth tokens) that reached it, and the kernel would split a payment's push and its query
 * between them.
 */
export function listenSimulator(
  config: Config,
  log: Logger,
  implied: boolean,
  /** Built beforehand (while a worker starts): it fires pending callbacks only once it listens. */
  sim = simulatorOf(config),
): ReturnType<typeof simulatorOf> | null {
  try {
    sim.listen({ port: config.ports.simulator, hostname: config.host, reusePort: false })
    return sim
  } catch (err) {
    // Not stopped: Elysia's stop of an app that never listened only prints a stack trace.
    if (!implied) throw err
    log.info('the M-Pesa simulator port is taken; using the simulator already there', {
      port: config.ports.simulator,
    })
    return null
  }
}

/**
 * Whether this process runs the host's simulator: `own` when `--only` names it, `implied` when it
 * comes along with payment (and another process may already serve it), null when payment talks to
 * another simulator or to Daraja. Asked of the process that runs it, never of a worker (its
 * supervisor runs the one simulator).
 */
export function simulatorWanted(config: Config): 'own' | 'implied' | null {
  if (config.get('mpesa.base_url')) return null
  if (config.only.includes('simulator')) return 'own'
  if (config.only.includes('payment') && !config.get('mpesa.simulator_url')) return 'implied'
  return null
}
