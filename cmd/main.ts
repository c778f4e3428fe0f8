#!/usr/bin/env bun
import { defineCommand, runCommand, runMain } from 'citty'
import { version } from '../daemon/version.ts'
import { commands } from './index.ts'

const main = defineCommand({
  meta: { name: 'mmp', version, description: 'Self-hosted mobile-money analytics platform' },
  subCommands: commands,
})

const rawArgs = process.argv.slice(2)
const builtin = rawArgs.some((a) => a === '--help' || a === '-h') || rawArgs.length === 0
if (builtin || (rawArgs.length === 1 && ['--version', '-v'].includes(rawArgs[0]!))) {
  await runMain(main)
} else {
  try {
    await runCommand(main, { rawArgs })
  } catch (err) {
    // Usage mistakes (unknown command, missing argument) fail before any command ran.
    // citty prints them with the usage text, on stdout: not with --json, whose stdout is JSON
    // only (the one line below says what is wrong).
    if ((err as Error)?.name === 'CLIError' && !rawArgs.includes('--json')) await runMain(main)
    // Anything else is one line for the operator; the stack only when asked for.
    const e = err as Error
    console.error(`mmp: ${e?.message ?? String(err)}`)
    if (process.env.MMP_DEBUG) console.error(e?.stack)
    process.exit(1)
  }
}
