import { ROLES } from '../../schema/vocabulary.ts'
import { api, currentSession } from '../api.ts'
import { date, h, section, showError, skeleton, table } from '../ui.ts'
import { field, formWith } from './settings-form.ts'

interface User {
  id: string
  email: string
  role: string
  status: string
}

/** An invitation's link with a Copy button: the invited person opens it to set a password. */
export function inviteLink(email: string, url: string, expires?: string): HTMLElement {
  const link = h('input', {
    class: 'invite-url',
    readonly: true,
    value: url,
    'aria-label': `Invitation link for ${email}`,
  }) as HTMLInputElement
  const copy = h('button', { type: 'button' }, 'Copy link') as HTMLButtonElement
  copy.addEventListener('click', async () => {
    link.select()
    try {
      await navigator.clipboard.writeText(url)
      copy.textContent = 'Copied'
    } catch {
      copy.textContent = 'Select and copy'
    }
  })
  return h(
    'div',
    { class: 'invite' },
    h(
      'p',
      {},
      `Send ${email} this link: it lets them choose a password and sign in`,
      expires ? ` (until ${date(expires)}).` : '.',
    ),
    h('div', { class: 'inline' }, link, copy),
  )
}

/** Users of the tenant: invite, change a role (PATCH auth/users/{id}), remove. */
export async function usersPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'users' }, skeleton())
  const invited = h('div', { role: 'status' })
  const me = currentSession()?.user.id
  const usersPath = `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`
  const roleSelect = (u: User) => {
    const select = h(
      'select',
      { 'aria-label': `Role of ${u.email}`, 'data-user': u.email },
      ROLES.map((r) => h('option', { value: r, selected: r === u.role }, r)),
    ) as HTMLSelectElement
    select.addEventListener('change', async () => {
      select.disabled = true
      try {
        await api.send('PATCH', `/api/v1/auth/users/${encodeURIComponent(u.id)}`, {
          role: select.value,
        })
        invited.replaceChildren(h('p', {}, `${u.email} is now ${select.value}.`))
      } catch (err) {
        select.value = u.role
        showError(err)
      } finally {
        select.disabled = false
      }
    })
    return select
  }
  const removeButton = (u: User) =>
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'data-remove': u.email,
        onclick: async () => {
          if (!confirm(`Remove ${u.email}? They are signed out at once.`)) return
          try {
            await api.send('DELETE', `${usersPath}/${encodeURIComponent(u.id)}`)
            invited.replaceChildren(h('p', {}, `${u.email} was removed.`))
            await load()
          } catch (err) {
            showError(err)
          }
        },
      },
      'Remove',
    )
  const load = async () => {
    try {
      const res = await api.get<{ data: User[] }>(usersPath)
      list.replaceChildren(
        table(
          ['Email', 'Role', 'Status', ''],
          res.data.map((u) =>
            u.id === me
              ? [u.email, `${u.role} (you)`, u.status, '']
              : [u.email, roleSelect(u), u.status, removeButton(u)],
          ),
          { id: 'users-table' },
        ),
      )
    } catch (err) {
      showError(err)
    }
  }
  const form = formWith({
    id: 'invite-form',
    label: 'Invite a user',
    fields: [
      field(
        'Email',
        h('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' }),
      ),
      field(
        'Role',
        h(
          'select',
          { name: 'role' },
          ROLES.map((r) => h('option', { value: r, selected: r === 'Viewer' }, r)),
        ),
      ),
    ],
    submit: 'Invite',
    onSubmit: async (v) => {
      const res = await api.send<{
        email: string
        invite_url?: string
        expires_at?: string
      }>('POST', usersPath, { email: v.email, role: v.role })
      invited.replaceChildren(
        res.invite_url
          ? inviteLink(res.email, res.invite_url, res.expires_at)
          : h('p', {}, `${res.email} was added.`),
      )
      await load()
    },
  })
  void load()
  return section(
    'Users and roles',
    h(
      'p',
      { class: 'muted' },
      'Viewers read; Analysts also export and recategorise; Managers also take payments, import statements and edit rules; Admins manage everything here.',
    ),
    form,
    invited,
    list,
  )
}
