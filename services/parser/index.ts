import { readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { defineService, type NoSettings } from '../kernel/context.ts'
import { subscribeLedger } from './ledger.ts'
import { shareStatementReads } from './read-gate.ts'
import { createParserApp } from './routes.ts'

/** Uploads a crash left behind in the spool folder are removed after this long. */
const STALE_UPLOAD_MS = 60 * 60 * 1000

export default defineService<NoSettings>({
  name: 'parser',
  create: (ctx) => {
    // `mmp serve`'s workers share the platform's statement reads (read-gate.ts).
    shareStatementReads(ctx.workers ?? 1)
    return {
      app: createParserApp(ctx),
      async start() {
        await subscribeLedger(ctx)
        const dir = join(ctx.registry.dataDir, 'tmp')
        let names: string[] = []
        try {
          names = readdirSync(dir).filter((n) => n.endsWith('.upload'))
        } catch {
          return
        }
        for (const name of names) {
          const path = join(dir, name)
          if (Date.now() - statSync(path).mtimeMs > STALE_UPLOAD_MS) rmSync(path, { force: true })
        }
      },
    }
  },
})
