import { login } from '../api.ts'
import { formValues, h, showError } from '../ui.ts'

export function loginView(onDone: () => void): HTMLElement {
  const form = h(
    'form',
    { class: 'login', 'aria-label': 'Log in' },
    h('h1', {}, 'mmp'),
    h('p', {}, 'Mobile-money analytics'),
    h(
      'label',
      {},
      'Email',
      h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true }),
    ),
    h(
      'label',
      {},
      'Password',
      h('input', {
        name: 'password',
        type: 'password',
        autocomplete: 'current-password',
        required: true,
      }),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Log in'),
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    const v = formValues(form)
    try {
      await login(v.email ?? '', v.password ?? '')
      onDone()
    } catch (err) {
      showError(err)
    }
  })
  return form
}
