import { exportJWK, importSPKI } from 'jose'
import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'
import { TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import { CreatedUser, CreateUserBody, LoginBody, TokenResponse } from './model.ts'
import { type AuthDeps, createUser, login } from './service.ts'

export async function createAuthApp(ctx: ServiceContext, deps: AuthDeps, publicKeyPem: string) {
  const jwk = {
    ...(await exportJWK(await importSPKI(publicKeyPem, TOKEN_ALGORITHM, { extractable: true }))),
    alg: TOKEN_ALGORITHM,
    use: 'sig',
    kid: 'mmp-1',
  }
  return createServiceApp(ctx, {
    title: 'Auth',
    description: 'Login, tokens, users and invitations',
  })
    .post('/api/v1/auth/login', ({ body }) => login(deps, body.email, body.password), {
      body: LoginBody,
      response: { 200: TokenResponse },
      detail: { summary: 'Log in with email and password', tags: ['auth'] },
    })
    .get('/api/v1/auth/.well-known/jwks.json', () => ({ keys: [jwk] }), {
      detail: { summary: 'Public keys that verify access tokens', tags: ['auth'] },
    })
    .post(
      '/api/v1/auth/users',
      async ({ body, actor, set }) => {
        set.status = 201
        return createUser(deps, actor, body)
      },
      {
        auth: 'admin',
        body: CreateUserBody,
        response: { 201: CreatedUser },
        detail: {
          summary: 'Create a user or an invitation in a tenant',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
}
