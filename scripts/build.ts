/**
 * Builds the single executable `dist/mmp` (or the path given: `bun scripts/build.ts OUT`);
 * migrations and assets are embedded by their imports, worker modules as entries of their own.
 */
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
const proc = Bun.spawnSync(
  [
    process.execPath,
    'build',
    '--compile',
    '--minify-syntax',
    '--sourcemap=none',
    join(root, 'cmd/main.ts'),
    // Worker threads made from a module, each bundled on its own at its path from the root.
    join(root, 'services/parser/statement-worker.ts'),
    join(root, 'services/parser/pdf-worker.ts'),
    '--outfile',
    process.argv[2] ?? join(root, 'dist/mmp'),
  ],
  { cwd: root, stdout: 'inherit', stderr: 'inherit' },
)
process.exit(proc.exitCode ?? 1)
