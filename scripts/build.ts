/** Builds the single executable `dist/mmp`; migrations and assets are embedded by their imports. */
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
    '--outfile',
    join(root, 'dist/mmp'),
  ],
  { cwd: root, stdout: 'inherit', stderr: 'inherit' },
)
process.exit(proc.exitCode ?? 1)
