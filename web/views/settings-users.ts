import { ROLES } from '../../schema/vocabulary.ts'
import { api } from '../api.ts'
import { date, h, section, showError, table } from '../ui.ts'
import { field, formWith } from './settings-form.ts'

const roles = ROLES

interface User {
  id: string
  email: string
  role: string
  status: string
}

export async function usersPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'users' })
  const invited = h('div', { role: 'status' })
  const load = async () => {
    try {
      const res = await api.get<{ data: User[] }>(
        `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`,
      )
      list.replaceChildren(
        table(
          ['Email', 'Role', 'Status'],
          res.data.map((u) => [u.email, u.role, u.status]),
          { id: 'users-table' },
        ),
      )
    } catch (err) {
      showError(err)
    }
  }
  const form = formWith(
    'invite-form',
    'Invite a user',
    [
      field(
        'Email',
        h('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' }),
      ),
      field(
        'Role',
        h(
          'select',
          { name: 'role' },
          roles.map((r) => h('option', { value: r, selected: r === 'Viewer' }, r)),
        ),
      ),
    ],
    'Invite',
    async (v) => {
      const res = await api.send<{
        email: string
        invite_token?: string
        expires_at?: string
      }>('POST', `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`, {
        email: v.email,
        role: v.role,
      })
      invited.replaceChildren(
        h(
          'p',
          {},
          `Invitation for ${res.email}: give them this token to accept at /api/v1/auth/accept-invite `,
          h('code', { class: 'token' }, res.invite_token ?? ''),
          res.expires_at ? ` (expires ${date(res.expires_at)})` : '',
        ),
      )
      await load()
    },
  )
  await load()
  return section('Users and roles', form, invited, list)
}
