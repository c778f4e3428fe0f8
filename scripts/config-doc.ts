/**
 * Writes docs/configuration.md from daemon/settings.ts, the one list of mmp's settings:
 * `bun scripts/config-doc.ts` after a setting changes. test/config-doc.test.ts fails when the
 * file and the list disagree.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kind, type Setting, settings } from '../daemon/settings.ts'
import { markdownTable } from './markdown-table.ts'

export const configDocPath = join(import.meta.dir, '..', 'docs', 'configuration.md')

const head = `# Configuration

<!-- Generated from daemon/settings.ts by \`bun scripts/config-doc.ts\`; do not edit by hand. -->

Precedence: built-in defaults < \`mmp.toml\` (or \`--config FILE\`, or \`MMP_CONFIG\`) < \`MMP_*\`
environment < command-line flags. A wrong value stops start-up with one line naming the key.
Keys in \`mmp.toml\` use the dotted names below as TOML tables (\`[gateway] timeout_ms = 5000\`).

Every setting belongs to a part (a service, the gateway, the simulator, the broker or the daemon
itself; \`daemon/settings.ts\` lists them all with their owners): a service is handed only its own
settings, typed, and only the secrets it uses (the JWT private key to auth, the callback secret and
M-Pesa credentials to payment, the webhook key to webhook; broker credentials stay with the daemon).
Give secrets (marked _secret_ below) in the environment only, never in \`mmp.toml\`. Without
\`mpesa.base_url\` the M-Pesa credentials keep their simulator values; real Daraja: [payments.md](payments.md).

Some settings have a flag as well: \`mmp serve --workers N\` (\`workers\`), \`--data-dir DIR\`,
\`--port-offset N\`, \`--config FILE\`. \`log.format\` \`auto\` writes JSON lines when stdout is not a
terminal. \`mqtt.url\` names an external MQTT 3.1.1/5 broker, e.g. \`mqtt://broker:1883\`.

## Every setting
`

const tail = `
## Discovery

Discovery is static: each service is found at \`127.0.0.1:<port>\` unless
\`MMP_DISCOVERY_<SERVICE>=http://host1:port,http://host2:port\` (or a \`[discovery]\` table) lists
its instances. Several instances of a service each own a share of the tenants (see
[scaling.md](scaling.md)); an instance learns which entry of the list it is from
\`MMP_INSTANCE_<SERVICE>\` (or an \`[instance]\` table), by default the address it listens on.
`

/** `300000` ms as `5m`: the form MMP_WEBHOOK_RETRY_SCHEDULE takes. */
function duration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0 && ms >= size) return `${ms / size}${unit}`
  return ms === 0 ? '0s' : `${ms}ms`
}

function kindOf(k: Kind): string {
  switch (k.type) {
    case 'int':
      return `integer ${k.min}–${k.max}`
    case 'enum':
      return k.values.join(', ')
    case 'bool':
      return 'true or false'
    case 'url':
      return 'URL'
    case 'list':
      return 'comma-separated list'
    case 'durations':
      return 'comma-separated durations'
    case 'schedule':
      return 'interval (6h) or cron line (UTC)'
    default:
      return k.secret ? 'text, _secret_' : 'text'
  }
}

function defaultOf(s: Setting): string {
  const d = s.default
  if (d === null) return '(none)'
  if (s.kind.type === 'durations') return (d as number[]).map(duration).join(',')
  if (Array.isArray(d)) return d.length ? d.join(', ') : '(empty)'
  return String(d)
}

/** docs/configuration.md as it should read for the settings of this checkout. */
export function configurationDoc(list: readonly Setting[] = settings): string {
  const rows = [...list]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((s) => [
      `\`${s.key}\``,
      `\`${s.env}\``,
      s.parts.join(', '),
      kindOf(s.kind),
      defaultOf(s),
      s.help,
    ])
  return `${head}\n${markdownTable(['key', 'environment', 'part', 'type', 'default', 'meaning'], rows)}\n${tail}`
}

if (import.meta.main) {
  writeFileSync(configDocPath, configurationDoc())
  console.log(`wrote ${configDocPath} (${settings.length} settings)`)
}
