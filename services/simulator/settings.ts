import type { Outcome } from './model.ts'

/** What the simulator is started with (daemon/simulator.ts builds it from the mpesa settings). */
export interface SimulatorOptions {
  delayMs: number
  version: string
  consumerKey?: string
  consumerSecret?: string
  shortcode?: string
  passkey?: string
  /**
   * A file that keeps the requests across restarts (like Daraja, which remembers them), so the
   * STK query still answers for requests made before a crash. In memory only when unset.
   */
  statePath?: string
  /** Overrides the outcome (for tests); default by phone number. */
  outcomeOf?: (phone: string) => Outcome
  /**
   * Production-like: refuses what Daraja allows only on its sandbox (http:// callback URLs, a
   * second C2B URL registration of a shortcode). Default: the sandbox.
   */
  production?: boolean
}
