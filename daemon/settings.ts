/**
 * Every setting of mmp in one table: its key in `mmp.toml`, its environment variable, its type and
 * its default. `daemon/config.ts` reads them in the order defaults < file < environment < flags and
 * stops with one line naming the key when a value is wrong.
 */
export type Kind =
  | { type: 'string'; secret?: boolean }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'url' }
  | { type: 'list' }
  | { type: 'durations' }

export interface Setting {
  key: string
  env: string
  kind: Kind
  default: string | number | boolean | string[] | number[] | null
  help: string
}

const int = (min: number, max: number): Kind => ({ type: 'int', min, max })
const secret: Kind = { type: 'string', secret: true }

export const settings: readonly Setting[] = [
  {
    key: 'data_dir',
    env: 'MMP_DATA_DIR',
    kind: { type: 'string' },
    default: './data',
    help: 'where every database and key lives',
  },
  {
    key: 'port_offset',
    env: 'MMP_PORT_OFFSET',
    kind: int(0, 50000),
    default: 0,
    help: 'added to every port',
  },
  {
    key: 'host',
    env: 'MMP_HOST',
    kind: { type: 'string' },
    default: '127.0.0.1',
    help: 'address the services bind to',
  },
  {
    key: 'gateway.host',
    env: 'MMP_GATEWAY_HOST',
    kind: { type: 'string' },
    default: '0.0.0.0',
    help: 'address the gateway binds to',
  },
  {
    key: 'log.level',
    env: 'MMP_LOG_LEVEL',
    kind: { type: 'enum', values: ['silent', 'error', 'warn', 'info', 'debug'] },
    default: 'info',
    help: 'log level',
  },
  {
    key: 'log.format',
    env: 'MMP_LOG_FORMAT',
    kind: { type: 'enum', values: ['auto', 'json', 'pretty'] },
    default: 'auto',
    help: 'json when stdout is not a terminal unless set',
  },
  {
    key: 'mqtt.url',
    env: 'MMP_MQTT_URL',
    kind: { type: 'url' },
    default: null,
    help: 'external MQTT broker; the embedded one runs when unset',
  },
  {
    key: 'mqtt.username',
    env: 'MMP_MQTT_USERNAME',
    kind: secret,
    default: null,
    help: 'broker user (generated for the embedded broker)',
  },
  {
    key: 'mqtt.password',
    env: 'MMP_MQTT_PASSWORD',
    kind: secret,
    default: null,
    help: 'broker password (generated for the embedded broker)',
  },
  {
    key: 'jwt.issuer',
    env: 'MMP_JWT_ISSUER',
    kind: { type: 'string' },
    default: 'mmp',
    help: 'iss of access tokens',
  },
  {
    key: 'jwt.audience',
    env: 'MMP_JWT_AUDIENCE',
    kind: { type: 'string' },
    default: 'mmp',
    help: 'aud of access tokens',
  },
  {
    key: 'jwt.access_ttl_s',
    env: 'MMP_JWT_ACCESS_TTL',
    kind: int(30, 86400),
    default: 900,
    help: 'access token lifetime in seconds',
  },
  {
    key: 'jwt.refresh_ttl_s',
    env: 'MMP_JWT_REFRESH_TTL',
    kind: int(60, 31536000),
    default: 2592000,
    help: 'refresh token lifetime in seconds',
  },
  {
    key: 'jwt.clock_tolerance_s',
    env: 'MMP_JWT_CLOCK_TOLERANCE',
    kind: int(0, 300),
    default: 5,
    help: 'accepted clock skew',
  },
  {
    key: 'jwt.public_key_file',
    env: 'MMP_JWT_PUBLIC_KEY_FILE',
    kind: { type: 'string' },
    default: null,
    help: 'PEM public key (default: keys/jwt-public.pem in the data dir)',
  },
  {
    key: 'jwt.private_key_file',
    env: 'MMP_JWT_PRIVATE_KEY_FILE',
    kind: { type: 'string' },
    default: null,
    help: 'PEM private key, auth only (default: keys/jwt-private.pem)',
  },
  {
    key: 'operator.email',
    env: 'MMP_OPERATOR_EMAIL',
    kind: { type: 'string' },
    default: 'operator@mmp.local',
    help: 'platform operator login, set on first run',
  },
  {
    key: 'operator.password',
    env: 'MMP_OPERATOR_PASSWORD',
    kind: secret,
    default: null,
    help: 'platform operator password; generated into operator.txt when unset',
  },
  {
    key: 'gateway.bulk_timeout_ms',
    env: 'MMP_GATEWAY_BULK_TIMEOUT_MS',
    // At most 240 s: the servers' idle timeout (Bun allows 255 s) must outlast every budget.
    kind: int(100, 240000),
    default: 120000,
    help: 'request budget of statement uploads and exports (at most 240 s)',
  },
  {
    key: 'gateway.timeout_ms',
    env: 'MMP_GATEWAY_TIMEOUT_MS',
    kind: int(100, 240000),
    default: 10000,
    help: 'default request budget (at most 240 s)',
  },
  {
    key: 'rate_limit.free',
    env: 'MMP_RATE_LIMIT_FREE',
    kind: int(1, 1000000),
    default: 20,
    help: 'requests per second, Free tenants',
  },
  {
    key: 'rate_limit.pro',
    env: 'MMP_RATE_LIMIT_PRO',
    kind: int(1, 1000000),
    default: 100,
    help: 'requests per second, Pro tenants',
  },
  {
    key: 'rate_limit.enterprise',
    env: 'MMP_RATE_LIMIT_ENTERPRISE',
    kind: int(1, 1000000),
    default: 500,
    help: 'requests per second, Enterprise tenants',
  },
  {
    key: 'rate_limit.burst_factor',
    env: 'MMP_RATE_LIMIT_BURST',
    kind: int(1, 100),
    default: 2,
    help: 'bucket size as a multiple of the rate',
  },
  {
    key: 'rate_limit.per_ip',
    env: 'MMP_RATE_LIMIT_IP',
    kind: int(1, 1000000),
    default: 20,
    help: 'requests per second per client IP on unauthenticated routes',
  },
  {
    key: 'webhook.allow_insecure',
    env: 'MMP_WEBHOOK_ALLOW_INSECURE',
    kind: { type: 'bool' },
    default: false,
    help: 'allow plain http to loopback (development and tests)',
  },
  {
    key: 'webhook.retry_schedule',
    env: 'MMP_WEBHOOK_RETRY_SCHEDULE',
    kind: { type: 'durations' },
    default: [0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
    help: 'delays before each attempt, e.g. 0s,5s,5m',
  },
  {
    key: 'webhook.allow_hosts',
    env: 'MMP_WEBHOOK_ALLOW_HOSTS',
    kind: { type: 'list' },
    default: [],
    help: 'hosts allowed despite resolving to private addresses',
  },
  {
    key: 'webhook.timeout_ms',
    env: 'MMP_WEBHOOK_TIMEOUT_MS',
    kind: int(100, 120000),
    default: 10000,
    help: 'one delivery attempt',
  },
  {
    key: 'mpesa.base_url',
    env: 'MMP_MPESA_BASE_URL',
    kind: { type: 'url' },
    default: null,
    help: 'Daraja base URL; the built-in simulator when unset',
  },
  {
    key: 'mpesa.consumer_key',
    env: 'MPESA_CONSUMER_KEY',
    kind: secret,
    default: 'mmp-simulator-key',
    help: 'Daraja app consumer key',
  },
  {
    key: 'mpesa.consumer_secret',
    env: 'MPESA_CONSUMER_SECRET',
    kind: secret,
    default: 'mmp-simulator-secret',
    help: 'Daraja app consumer secret',
  },
  {
    key: 'mpesa.shortcode',
    env: 'MPESA_SHORTCODE',
    kind: { type: 'string' },
    default: '174379',
    help: 'paybill or till number',
  },
  {
    key: 'mpesa.passkey',
    env: 'MPESA_PASSKEY',
    kind: secret,
    default: 'mmp-simulator-passkey',
    help: 'Lipa na M-Pesa online passkey',
  },
  {
    key: 'mpesa.b2c_initiator',
    env: 'MPESA_INITIATOR_NAME',
    kind: { type: 'string' },
    default: 'mmp',
    help: 'B2C initiator name',
  },
  {
    key: 'mpesa.b2c_security_credential',
    env: 'MPESA_SECURITY_CREDENTIAL',
    kind: secret,
    default: 'mmp-simulator-credential',
    help: 'B2C security credential',
  },
  {
    key: 'mpesa.callback_base_url',
    env: 'MMP_CALLBACK_BASE_URL',
    kind: { type: 'url' },
    default: null,
    help: 'public base URL the provider calls back (default: the gateway)',
  },
  {
    key: 'mpesa.callback_secret',
    env: 'MMP_CALLBACK_SECRET',
    kind: secret,
    default: null,
    help: 'HMAC key of callback tokens (generated by init)',
  },
  {
    key: 'mpesa.simulator_delay_ms',
    env: 'MMP_SIMULATOR_DELAY_MS',
    kind: int(0, 600000),
    default: 1000,
    help: 'simulator callback delay',
  },
  {
    key: 'mpesa.allowed_ips',
    env: 'MMP_CALLBACK_ALLOWED_IPS',
    kind: { type: 'list' },
    default: [],
    help: 'callback source-IP allow-list (empty: any)',
  },
  {
    key: 'mpesa.reconcile_after_s',
    env: 'MMP_RECONCILE_AFTER',
    kind: int(1, 86400),
    default: 120,
    help: 'query the provider for payments pending longer than this',
  },
  {
    key: 'billing.grace_days',
    env: 'MMP_BILLING_GRACE_DAYS',
    kind: int(0, 90),
    default: 7,
    help: 'days past due before suspension',
  },
  {
    key: 'registry.max_open',
    env: 'MMP_MAX_OPEN_DATABASES',
    kind: int(8, 100000),
    default: 256,
    help: 'open databases in the whole process (3 files each); lowered to fit the open-files limit',
  },
  {
    key: 'outbox.replay_window_s',
    env: 'MMP_OUTBOX_REPLAY_WINDOW',
    kind: int(0, 86400),
    default: 300,
    help: 'on start, republish events sent this recently',
  },
  {
    key: 'outbox.paused',
    env: 'MMP_OUTBOX_PAUSED',
    kind: { type: 'bool' },
    default: false,
    help: 'hold every event in the outbox (maintenance, tests)',
  },
  // billing service
  {
    key: 'billing.due_days',
    env: 'MMP_BILLING_DUE_DAYS',
    kind: int(0, 90),
    default: 7,
    help: 'days from an invoice being issued to its due date',
  },
  {
    key: 'billing.cycle_interval_s',
    env: 'MMP_BILLING_CYCLE_INTERVAL',
    kind: int(0, 86400),
    default: 60,
    help: 'how often the billing cycle runs (0: only on demand)',
  },
  // auth and gateway (issue 3)
  {
    key: 'auth.login_max_failures',
    env: 'MMP_LOGIN_MAX_FAILURES',
    kind: int(1, 1000),
    default: 5,
    help: 'failed logins per email+IP before 429',
  },
  {
    key: 'auth.login_window_s',
    env: 'MMP_LOGIN_WINDOW',
    kind: int(1, 86400),
    default: 900,
    help: 'seconds the failed logins are counted over (and the lockout lasts)',
  },
  {
    key: 'auth.login_max_per_email',
    env: 'MMP_LOGIN_MAX_PER_EMAIL',
    kind: int(1, 100000),
    default: 20,
    help: 'failed logins per email over every IP in a window before 429 (rotating addresses)',
  },
  {
    key: 'gateway.body_limit',
    env: 'MMP_GATEWAY_BODY_LIMIT',
    kind: int(1024, 1073741824),
    default: 1048576,
    help: 'largest request body in bytes (413 above)',
  },
  {
    key: 'gateway.upload_limit',
    env: 'MMP_GATEWAY_UPLOAD_LIMIT',
    kind: int(1024, 1073741824),
    default: 20971520,
    help: 'largest body in bytes on upload routes (statements, parser)',
  },
  {
    key: 'gateway.hsts_max_age_s',
    env: 'MMP_HSTS_MAX_AGE',
    kind: int(0, 63072000),
    default: 0,
    help: 'Strict-Transport-Security max-age for the dashboard when served behind TLS (0: none)',
  },
  {
    key: 'gateway.breaker_threshold_pct',
    env: 'MMP_BREAKER_THRESHOLD',
    kind: int(1, 99),
    default: 50,
    help: 'failure percentage over the window that opens an upstream breaker',
  },
  {
    key: 'gateway.breaker_min_requests',
    env: 'MMP_BREAKER_MIN_REQUESTS',
    kind: int(1, 100000),
    default: 10,
    help: 'requests needed in the window before a breaker may open',
  },
  {
    key: 'gateway.breaker_window_ms',
    env: 'MMP_BREAKER_WINDOW_MS',
    kind: int(1000, 600000),
    default: 10000,
    help: 'rolling window the failure rate is measured over',
  },
  {
    key: 'gateway.breaker_half_open_ms',
    env: 'MMP_BREAKER_HALF_OPEN_MS',
    kind: int(100, 600000),
    default: 5000,
    help: 'time an open breaker waits before letting one probe through',
  },
  // webhook service: per-endpoint delivery pacing
  {
    key: 'webhook.rate_limit',
    env: 'MMP_WEBHOOK_RATE_LIMIT',
    kind: int(1, 1000000),
    default: 500,
    help: 'deliveries per second per endpoint (excess waits); an endpoint may set its own',
  },
  {
    key: 'webhook.secret_key',
    env: 'MMP_WEBHOOK_SECRET_KEY',
    kind: secret,
    default: null,
    help: 'base64 of 32 bytes: encrypts webhook signing secrets at rest (default: data/secrets.json)',
  },
  {
    key: 'webhook.max_in_flight',
    env: 'MMP_WEBHOOK_MAX_IN_FLIGHT',
    kind: int(1, 10000),
    default: 32,
    help: 'concurrent delivery attempts per endpoint',
  },
  {
    key: 'internal.hop_key',
    env: 'MMP_HOP_KEY',
    kind: secret,
    default: null,
    help: 'signs headers one part sends another (client address, purpose); the same on every process of an install (default: data dir secrets.json)',
  },
  // crash testing (DESIGN §15)
  {
    key: 'faults.allow',
    env: 'MMP_ALLOW_FAULTS',
    kind: { type: 'bool' },
    default: false,
    help: 'permit a fault point (tests only); without it MMP_FAULT is ignored',
  },
  {
    key: 'faults.point',
    env: 'MMP_FAULT',
    kind: { type: 'string' },
    default: null,
    help: 'the fault point where the process SIGKILLs itself (needs faults.allow)',
  },
]
