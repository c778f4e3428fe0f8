import { afterAll, setDefaultTimeout } from 'bun:test'
import { killLeftBehind } from './children.ts'

/**
 * Loaded before every test file (bunfig.toml `[test] preload`). Bun 1.4.5 ignores `timeout` under
 * `[test]` in bunfig.toml and keeps every test and hook at 5 s (DESIGN §13), which an end-to-end
 * test that starts a platform exceeds on a busy machine. A test whose subject is time states its
 * own budget against a reference; this is only the ceiling that ends a stuck one.
 */
setDefaultTimeout(60_000)

// A hook here runs once, after every file of the run: a platform still running then was left
// behind by a test that did not stop what it started, and the run fails naming it.
afterAll(async () => {
  const left = await killLeftBehind()
  if (left.length) throw new Error(`left running after the tests: ${left.join('; ')}`)
})
