import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import { eventually, pickOffset } from './support/platform.ts'

/**
 * Follows the README's Quick start on a fresh `git clone`, command by command, as a newcomer
 * would: the commands are read from the clone's README, not copied here. Three liberties:
 * `npm install` becomes a link to this checkout's node_modules (the registry is not the thing
 * under test), every port moves by MMP_PORT_OFFSET so the test can run beside others, and the
 * `<from data/operator.txt>` placeholder is filled from that file, as the README says to.
 */
const root = join(import.meta.dir, '..')

/** The shell commands of a README section's ```sh blocks, continuation lines joined. */
function sectionCommands(readme: string, heading: string): string[] {
  const start = readme.indexOf(`## ${heading}\n`)
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end)
  const out: string[] = []
  for (const m of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = m[1]!.replace(/\\\n\s*/g, '').split('\n')
    for (const line of lines) {
      const cmd = line.replace(/\s+#.*$/, '').trim()
      if (cmd) out.push(cmd)
    }
  }
  return out
}

describe('the README quick start, on a fresh clone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-quickstart-'))
  const clone = join(dir, 'mmp')
  let server: Subprocess | null = null
  let out = ''

  afterAll(async () => {
    if (server && server.exitCode === null) {
      // npm start runs bun under a shell: end the whole process group setsid gave it.
      process.kill(-server.pid, 'SIGTERM')
      await server.exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it('starts, logs in, creates a tenant with demo data, and the platform answers', async () => {
    const cloned = Bun.spawnSync(['git', 'clone', '--quiet', root, clone])
    expect(cloned.exitCode).toBe(0)
    const readme = readFileSync(join(clone, 'README.md'), 'utf8')
    const commands = sectionCommands(readme, 'Quick start').filter(
      (c) => !c.includes('apt-get') && !c.includes('npm test'),
    )
    expect(commands.slice(0, 2)).toEqual(['npm install', 'npm start'])
    const offset = await pickOffset()
    const port = 9000 + offset
    const env = { ...process.env, MMP_PORT_OFFSET: String(offset), MMP_LOG_FORMAT: '' }
    delete (env as Record<string, string | undefined>).MMP_DATA_DIR

    for (const command of commands) {
      if (command === 'npm install') {
        symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'))
        continue
      }
      if (command === 'npm start') {
        server = spawn(['setsid', 'npm', 'start'], {
          cwd: clone,
          env,
          stdout: 'pipe',
          stderr: 'pipe',
        })
        const pump = async (s: ReadableStream<Uint8Array>) => {
          for await (const c of s) out += new TextDecoder().decode(c)
        }
        void pump(server.stdout as ReadableStream<Uint8Array>)
        void pump(server.stderr as ReadableStream<Uint8Array>)
        const up = await eventually(
          () => out.split('\n').find((l) => l.includes('"mmp is up"')),
          30_000,
          `"mmp is up" from npm start:\n${out}`,
        )
        // The first line an operator reads says where everything is.
        expect(JSON.parse(up)).toMatchObject({
          dashboard: `http://localhost:${port}/`,
          docs: `http://localhost:${port}/docs`,
          operator_password: join(clone, 'data', 'operator.txt'),
        })
        continue
      }
      const password = /password: (.+)/.exec(
        readFileSync(join(clone, 'data', 'operator.txt'), 'utf8'),
      )![1]!
      const line = command
        .replaceAll('localhost:9000', `localhost:${port}`)
        .replace('<from data/operator.txt>', password)
      const r = Bun.spawnSync(['sh', '-c', line], { cwd: clone, env })
      const said = r.stdout.toString() + r.stderr.toString()
      expect([command, r.exitCode]).toEqual([command, 0])
      if (command.startsWith('curl'))
        expect(JSON.parse(r.stdout.toString())).toHaveProperty('access_token')
      if (command.includes('demo seed'))
        expect(said).toMatch(/duka: 365 days, \d+ transactions written/)
    }

    expect((await fetch(`http://localhost:${port}/health`)).status).toBe(200)
    const page = await fetch(`http://localhost:${port}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const docs = await fetch(`http://localhost:${port}/docs`)
    expect(docs.status).toBe(200)
  }, 90_000)
})
