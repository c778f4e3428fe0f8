import { t } from 'elysia'
import { CreatedUser, Role, UserList } from '../../schema/peers.ts'

export { CreatedUser, Role, UserList }

import { MIN_PASSWORD_LENGTH } from './password-policy.ts'

/** A password being set; `assertStrongPassword` checks length and strength with one message. */
const NewPassword = t.String({
  minLength: 1,
  maxLength: 1024,
  description: `At least ${MIN_PASSWORD_LENGTH} characters and not guessable (zxcvbn score 3 or more, not a common password)`,
})

export const LoginBody = t.Object({
  email: t.String({ format: 'email', maxLength: 254 }),
  password: t.String({ minLength: 1, maxLength: 1024 }),
})

export const RefreshBody = t.Object({
  refresh_token: t.String({ minLength: 16, maxLength: 200 }),
})

export const LogoutBody = t.Object({
  refresh_token: t.Optional(t.String({ minLength: 16, maxLength: 200 })),
})

export const Me = t.Object({ user_id: t.String(), tenant_id: t.String(), role: Role })

export const User = t.Object(
  {
    id: t.String(),
    email: t.String(),
    role: Role,
    tenant_id: t.String(),
  },
  { title: 'User' },
)

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal('Bearer'),
  expires_in: t.Integer(),
  refresh_token: t.String(),
  user: User,
})

export const CreateUserBody = t.Object({
  tenant_id: t.String(),
  email: t.String({ format: 'email', maxLength: 254 }),
  role: Role,
  password: t.Optional(NewPassword),
})

export const AcceptInviteBody = t.Object({
  token: t.String({ minLength: 16, maxLength: 200 }),
  password: NewPassword,
})

export const RevocationList = t.Object({
  data: t.Array(
    t.Object({
      user_id: t.String(),
      session_id: t.Union([t.String(), t.Null()]),
      before: t.Number({ description: 'Epoch seconds: tokens issued at or before it are dead' }),
      reason: t.String(),
    }),
  ),
  keep_seconds: t.Integer(),
})

export const CreateApiKeyBody = t.Object({
  tenant_id: t.Optional(
    t.String({ description: 'The operator names the tenant; Admins their own' }),
  ),
  name: t.String({ minLength: 1, maxLength: 100, description: 'What the key is for' }),
  role: Role,
  expires_at: t.Optional(
    t.Nullable(t.String({ format: 'date-time', description: 'Refused from then on; none: never' })),
  ),
})

const apiKeyFields = {
  id: t.String({ description: '`key_…`' }),
  tenant_id: t.String(),
  name: t.String(),
  role: Role,
  prefix: t.String({ description: 'The first characters of the key, to tell keys apart' }),
  created_at: t.String(),
  expires_at: t.Nullable(t.String()),
}

export const ApiKey = t.Object({
  ...apiKeyFields,
  last_used_at: t.Nullable(t.String({ description: 'Updated at most once a minute' })),
})

export const CreatedApiKey = t.Object({
  ...apiKeyFields,
  last_used_at: t.Null(),
  key: t.Optional(
    t.String({
      description:
        '`mmp_sk_…`: shown this once, stored only hashed; absent from an `Idempotency-Key` replay',
    }),
  ),
  shown_once: t.Optional(
    t.String({ description: 'On an `Idempotency-Key` replay: which secret was shown once' }),
  ),
})

export const ApiKeyList = t.Object({ data: t.Array(ApiKey) })

/** What auth tells another process about a key presented to it. */
export const ApiKeyGrantOut = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  role: Role,
  expires_at: t.Nullable(t.String()),
})

/** RFC 7517 JSON Web Key Set of the access-token signing key (Ed25519, EdDSA). */
export const Jwks = t.Object(
  {
    keys: t.Array(
      t.Object({
        kty: t.String({ examples: ['OKP'] }),
        crv: t.String({ examples: ['Ed25519'] }),
        x: t.String(),
        alg: t.String({ examples: ['EdDSA'] }),
        use: t.String({ examples: ['sig'] }),
        kid: t.String(),
      }),
    ),
  },
  { title: 'Jwks' },
)
