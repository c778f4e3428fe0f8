/**
 * The auth service's slice of the configuration, filled by the daemon (daemon/slices.ts) with the
 * settings naming `auth` in daemon/settings.ts. It is the only service holding the JWT private key
 * and the operator's first password.
 */
export interface AuthSettings {
  /** `iss` and `aud` of the tokens it signs. */
  issuer: string
  audience: string
  accessTtlS: number
  refreshTtlS: number
  /** Accepted clock skew; a revocation is kept this long past the access token lifetime. */
  clockToleranceS: number
  login: {
    /** Failed logins per email and IP in a window before 429. */
    maxFailures: number
    /** Failed logins per email over every IP in a window before 429. */
    maxPerEmail: number
    windowS: number
  }
  operator: { email: string; password: string | null }
  /** The dashboard's address (`gateway.public_url`): invitation links point at its accept page. */
  publicUrl: string
  /** Where `operator.txt` is written when the operator's password is generated. */
  dataDir: string
  /** Null where the key file is absent: the service refuses to start. */
  jwtPrivatePem: string | null
  jwtPublicPem: string
}
