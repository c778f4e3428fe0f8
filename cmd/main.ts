#!/usr/bin/env bun
import { defineCommand, runMain } from 'citty'
import { version } from '../daemon/version.ts'
import { commands } from './index.ts'

const main = defineCommand({
  meta: { name: 'mmp', version, description: 'Self-hosted mobile-money analytics platform' },
  subCommands: commands,
})

runMain(main)
