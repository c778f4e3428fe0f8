import { describe, expect, it } from 'bun:test'
import { serviceNames } from '../services/kernel/context.ts'
import { type Config, loadConfig } from './config.ts'
import type { Secrets } from './secrets.ts'
import { type Owner, settings } from './settings.ts'
import { sliceOf } from './slices.ts'

const owners: readonly Owner[] = [...serviceNames, 'gateway', 'simulator', 'broker', 'daemon']

/** The setting each loaded secret comes from (loadSecrets resolves them before any slice). */
const secretSetting: Record<keyof Secrets, string> = {
  jwtPrivatePem: 'jwt.private_key_file',
  jwtPublicPem: 'jwt.public_key_file',
  mqttUsername: 'mqtt.username',
  mqttPassword: 'mqtt.password',
  callbackSecret: 'mpesa.callback_secret',
  webhookKey: 'webhook.secret_key',
  hopKey: 'internal.hop_key',
}

/** The secrets each service uses; every other service gets none. */
const secretsUsed: Partial<Record<(typeof serviceNames)[number], Array<keyof Secrets>>> = {
  auth: ['jwtPrivatePem', 'jwtPublicPem'],
  payment: ['callbackSecret'],
  webhook: ['webhookKey'],
}

const fakeSecrets = (mark: (field: string) => string): Secrets => ({
  jwtPublicPem: mark('jwtPublicPem'),
  jwtPrivatePem: mark('jwtPrivatePem'),
  mqttUsername: mark('mqttUsername'),
  mqttPassword: mark('mqttPassword'),
  callbackSecret: mark('callbackSecret'),
  webhookKey: mark('webhookKey'),
  hopKey: mark('hopKey'),
})

/** The config and secrets, recording every setting and every secret a slice builder reads. */
function recording(config: Config, read: Set<string>, secretsRead: Set<string>) {
  const watched: Config = Object.defineProperties(
    { ...config },
    {
      get: {
        value: (key: string) => {
          read.add(key)
          return config.get(key)
        },
      },
      dataDir: {
        get: () => {
          read.add('data_dir')
          return config.dataDir
        },
      },
      values: {
        get: () => {
          throw new Error('a slice builder read the whole settings bag')
        },
      },
    },
  )
  const secrets = new Proxy(
    fakeSecrets((f) => `pem-or-key-${f}`),
    {
      get(target, field: string) {
        secretsRead.add(field)
        return target[field as keyof Secrets]
      },
    },
  )
  return { config: watched, secrets, gatewayUrl: 'http://gw', simulatorUrl: 'http://sim' }
}

describe('settings slices', () => {
  it('names the owning parts of every setting', () => {
    const unowned = settings.filter(
      (s) => s.parts.length === 0 || s.parts.some((p) => !owners.includes(p)),
    )
    expect(unowned.map((s) => s.key)).toEqual([])
    const twice = settings.filter((s) => new Set(s.parts).size !== s.parts.length)
    expect(twice.map((s) => s.key)).toEqual([])
  })

  for (const name of serviceNames) {
    it(`gives ${name} exactly the settings it owns and only the secrets it uses`, () => {
      const read = new Set<string>()
      const secretsRead = new Set<string>()
      sliceOf(name, recording(loadConfig({ env: {} }), read, secretsRead))
      expect([...secretsRead].sort()).toEqual([...(secretsUsed[name] ?? [])].sort())
      const reached = new Set([
        ...read,
        ...[...secretsRead].map((f) => secretSetting[f as keyof Secrets]),
      ])
      const owned = settings.filter((s) => s.parts.includes(name)).map((s) => s.key)
      expect([...reached].sort()).toEqual(owned.sort())
    })
  }

  it('lets no secret into a slice of a service that does not own it', () => {
    const secretSettings = settings.filter((s) => s.kind.type === 'string' && s.kind.secret)
    const env = Object.fromEntries(secretSettings.map((s) => [s.env, `marker-${s.key}`]))
    const config = loadConfig({ env })
    const from = {
      config,
      secrets: fakeSecrets((f) => `marker-${f}`),
      gatewayUrl: 'http://gw',
      simulatorUrl: 'http://sim',
    }
    for (const name of serviceNames) {
      const text = JSON.stringify(sliceOf(name, from))
      const found = [...text.matchAll(/marker-([\w.]+)/g)].map((m) => m[1]!)
      const allowed = [
        ...secretSettings.filter((s) => s.parts.includes(name)).map((s) => s.key),
        ...(secretsUsed[name] ?? []),
      ]
      expect({ name, found: found.filter((m) => !allowed.includes(m)) }).toEqual({
        name,
        found: [],
      })
    }
    // Broker credentials and the hop key stay with the daemon.
    const all = serviceNames.map((n) => JSON.stringify(sliceOf(n, from))).join('\n')
    for (const m of ['mqttUsername', 'mqttPassword', 'hopKey', 'mqtt.username', 'mqtt.password'])
      expect(all).not.toContain(`marker-${m}`)
  })

  it('takes every default from daemon/settings.ts, the webhook retry schedule included', () => {
    const from = {
      config: loadConfig({ env: {} }),
      secrets: fakeSecrets(() => 'x'),
      gatewayUrl: 'http://gw',
      simulatorUrl: 'http://sim',
    }
    const defaultOf = (key: string) => settings.find((s) => s.key === key)!.default
    expect(sliceOf('webhook', from).retrySchedule).toEqual(
      defaultOf('webhook.retry_schedule') as number[],
    )
    expect(sliceOf('billing', from)).toEqual({
      graceDays: defaultOf('billing.grace_days') as number,
      dueDays: defaultOf('billing.due_days') as number,
      cycleIntervalS: defaultOf('billing.cycle_interval_s') as number,
    })
    expect(sliceOf('payment', from)).toMatchObject({
      providerUrl: 'http://sim',
      usingSimulator: true,
      callbackBase: 'http://gw',
      reconcileAfterS: defaultOf('mpesa.reconcile_after_s') as number,
    })
  })

  it('freezes every slice', () => {
    const from = {
      config: loadConfig({ env: {} }),
      secrets: fakeSecrets(() => 'x'),
      gatewayUrl: 'http://gw',
      simulatorUrl: 'http://sim',
    }
    const webhook = sliceOf('webhook', from)
    expect(Object.isFrozen(webhook)).toBe(true)
    expect(Object.isFrozen(webhook.retrySchedule)).toBe(true)
  })
})
