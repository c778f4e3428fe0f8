import type { ApiKeyView } from '../../schema/auth/views.ts'
import { ROLES } from '../../schema/vocabulary.ts'
import { api } from '../api.ts'
import { date, h, section, showError, table } from '../ui.ts'
import { copyButton, field, formWith } from './settings-form.ts'

type ApiKey = ApiKeyView

/**
 * Secret API keys for the tenant's servers: made with a name, role and optional expiry, the key
 * shown once with a copy button, listed by prefix and last use, revoked at once.
 */
export async function apiKeysPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'api-keys' })
  const shown = h('div', { role: 'status', id: 'api-key-created' })
  const path = `/api/v1/auth/api-keys?tenant_id=${encodeURIComponent(tenantId)}`
  const load = async () => {
    try {
      const res = await api.get<{ data: ApiKey[] }>(path)
      list.replaceChildren(
        res.data.length
          ? table(
              ['Name', 'Key', 'Role', 'Last used', 'Expires', ''],
              res.data.map((k) => [
                k.name,
                h('code', {}, `${k.prefix}…`),
                k.role,
                k.last_used_at ? date(k.last_used_at) : 'never',
                k.expires_at ? date(k.expires_at) : 'never',
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'small',
                    'aria-label': `Revoke API key ${k.name}`,
                    onclick: async () => {
                      if (!confirm(`Revoke "${k.name}"? Servers using it stop at once.`)) return
                      try {
                        await api.send('DELETE', `/api/v1/auth/api-keys/${k.id}`)
                        await load()
                      } catch (err) {
                        showError(err)
                      }
                    },
                  },
                  'Revoke',
                ),
              ]),
              { id: 'api-keys-table' },
            )
          : h('p', { class: 'muted' }, 'No API keys yet.'),
      )
    } catch (err) {
      showError(err)
    }
  }
  const form = formWith({
    id: 'api-key-form',
    label: 'Create an API key',
    fields: [
      field('Name', h('input', { name: 'name', required: true, maxlength: 100 })),
      field(
        'Role',
        h(
          'select',
          { name: 'role' },
          ROLES.map((r) => h('option', { value: r, selected: r === 'Viewer' }, r)),
        ),
      ),
      field('Expires (optional)', h('input', { name: 'expires_at', type: 'datetime-local' })),
    ],
    submit: 'Create key',
    onSubmit: async (v) => {
      const made = await api.send<ApiKey & { key: string }>('POST', '/api/v1/auth/api-keys', {
        tenant_id: tenantId,
        name: v.name,
        role: v.role,
        ...(v.expires_at ? { expires_at: new Date(v.expires_at).toISOString() } : {}),
      })
      const code = h('code', { class: 'token', id: 'api-key-secret' }, made.key)
      shown.replaceChildren(
        h(
          'p',
          {},
          `Key "${made.name}" (${made.role}). Copy it now: it is not shown again. `,
          code,
          ' ',
          copyButton('copy-api-key', made.key, code),
        ),
      )
      await load()
    },
  })
  await load()
  return section(
    'API keys',
    h(
      'p',
      { class: 'muted' },
      'For servers: send Authorization: Bearer mmp_sk_… Keys act with their role but cannot manage keys or users.',
    ),
    form,
    shown,
    list,
  )
}
