import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { exportPKCS8, exportSPKI, generateKeyPair, importJWK, type JWK } from 'jose'
import type { Config } from './config.ts'
import { restrictNewFiles, secureDataDir } from './permissions.ts'

export interface Secrets {
  /**
   * The key tokens are verified with: the data dir's (or jwt.public_key_file); empty in a part
   * on a host of its own, which asks auth's JWKS for it on start (`publicKeyFromJwks`).
   */
  jwtPublicPem: string
  /** Only present where the auth service runs. */
  jwtPrivatePem: string | null
  mqttUsername: string
  mqttPassword: string
  callbackSecret: string
  /** Encrypts webhook signing secrets at rest (base64 of 32 bytes). */
  webhookKey: string
  /** Signs what one part tells another in headers (client address, purpose): `x-mmp-hop`. */
  hopKey: string
}

function writeSecretFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  writeFileSync(path, content, { mode: 0o600 })
  chmodSync(path, 0o600)
}

const randomSecret = () =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
const randomKey = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')

/**
 * Creates what a data dir needs on first use (DESIGN §2): the JWT key pair and the generated
 * secrets, all mode 0600. Existing files are left alone, so running it twice is harmless.
 * Returns the files it created.
 */
export async function initDataDir(config: Config): Promise<string[]> {
  restrictNewFiles()
  const created: string[] = []
  mkdirSync(join(config.dataDir, 'platform'), { recursive: true })
  mkdirSync(join(config.dataDir, 'tenants'), { recursive: true })
  const priv = privateKeyPath(config)
  const pub = publicKeyPath(config)
  // The key pair belongs to auth: a part on a host of its own, without auth, makes none (it
  // would verify tokens against a key nobody signs with) and asks auth's JWKS instead.
  const runsAuth = config.only.includes('auth')
  if (runsAuth && !existsSync(priv) && !config.get<string | null>('jwt.public_key_file')) {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', {
      crv: 'Ed25519',
      extractable: true,
    })
    writeSecretFile(priv, await exportPKCS8(privateKey))
    writeFileSync(pub, await exportSPKI(publicKey), { mode: 0o600 })
    created.push(priv, pub)
  }
  const secretsFile = join(config.dataDir, 'secrets.json')
  if (!existsSync(secretsFile)) {
    writeSecretFile(
      secretsFile,
      JSON.stringify(
        {
          mqtt_username: 'mmp',
          mqtt_password: randomSecret(),
          callback_secret: randomSecret(),
          webhook_key: randomKey(),
          hop_key: randomKey(),
        },
        null,
        2,
      ),
    )
    created.push(secretsFile)
  } else {
    // Data dirs made before a secret existed get it on the next start.
    const stored = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, string>
    const missing = {
      ...(stored.webhook_key ? {} : { webhook_key: randomKey() }),
      ...(stored.hop_key ? {} : { hop_key: randomKey() }),
    }
    if (Object.keys(missing).length) {
      writeSecretFile(secretsFile, JSON.stringify({ ...stored, ...missing }, null, 2))
      created.push(secretsFile)
    }
  }
  // Installs made with a loose umask, or files copied in, are tightened on every start.
  secureDataDir(config.dataDir)
  return created
}

const privateKeyPath = (c: Config) =>
  c.get<string | null>('jwt.private_key_file') ?? join(c.dataDir, 'keys', 'jwt-private.pem')
const publicKeyPath = (c: Config) =>
  c.get<string | null>('jwt.public_key_file') ?? join(c.dataDir, 'keys', 'jwt-public.pem')

/** Secrets from the environment first, then the data dir's files. */
export function loadSecrets(config: Config): Secrets {
  const file = join(config.dataDir, 'secrets.json')
  const stored = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)
    : {}
  const priv = privateKeyPath(config)
  return {
    jwtPublicPem: existsSync(publicKeyPath(config))
      ? readFileSync(publicKeyPath(config), 'utf8')
      : '',
    jwtPrivatePem: existsSync(priv) ? readFileSync(priv, 'utf8') : null,
    mqttUsername: config.get<string | null>('mqtt.username') ?? stored.mqtt_username ?? 'mmp',
    mqttPassword: config.get<string | null>('mqtt.password') ?? stored.mqtt_password ?? '',
    callbackSecret:
      config.get<string | null>('mpesa.callback_secret') ?? stored.callback_secret ?? '',
    webhookKey: config.get<string | null>('webhook.secret_key') ?? stored.webhook_key ?? '',
    hopKey: config.get<string | null>('internal.hop_key') ?? stored.hop_key ?? '',
  }
}

/**
 * The token-signing public key for a part that has no key file of its own when it starts: the
 * data dir's file as soon as auth (sharing the dir) writes it, or the key auth publishes
 * (`GET /api/v1/auth/.well-known/jwks.json` on the first auth instance of discovery), whichever
 * comes first. Tries every half second, then less often; the part serves meanwhile and answers
 * 503 for tokens.
 */
export async function publicKeyFromAuth(
  config: Config,
  opts: { onWait?: (error: string) => void } = {},
): Promise<string> {
  const url = `${config.discovery.auth[0]}/api/v1/auth/.well-known/jwks.json`
  const file = publicKeyPath(config)
  let told = false
  for (let attempt = 0; ; attempt++) {
    if (existsSync(file)) return readFileSync(file, 'utf8')
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
      if (!res.ok) throw new Error(`${url} answered ${res.status}`)
      const { keys } = (await res.json()) as { keys?: JWK[] }
      const jwk = keys?.find((k) => k.kty === 'OKP' && k.crv === 'Ed25519')
      if (!jwk) throw new Error(`${url} lists no Ed25519 key`)
      return await exportSPKI((await importJWK(jwk, 'EdDSA')) as CryptoKey)
    } catch (err) {
      if (!told) opts.onWait?.((err as Error).message)
      told = true
      await Bun.sleep(Math.min(5000, 500 * 2 ** Math.floor(attempt / 10)))
    }
  }
}
