import { acceptInvite } from '../api.ts'
import { formValues, h, showError } from '../ui.ts'

/**
 * The page an invitation link opens (`#/accept?token=…`): the invited person chooses a password
 * and is signed in. Auth checks the strength and its 422 detail is shown as it comes.
 */
export function acceptView(token: string, onDone: () => void): HTMLElement {
  const form = h(
    'form',
    { class: 'login', id: 'accept-form', 'aria-label': 'Accept the invitation' },
    h('h1', {}, 'mmp'),
    h('p', {}, 'You have been invited. Choose a password to sign in.'),
    h(
      'label',
      {},
      'New password',
      h('input', {
        name: 'password',
        type: 'password',
        autocomplete: 'new-password',
        required: true,
        minlength: 10,
        'aria-describedby': 'password-rule',
      }),
    ),
    h(
      'p',
      { class: 'muted', id: 'password-rule' },
      'At least 10 characters and hard to guess: a few unrelated words work well.',
    ),
    h(
      'label',
      {},
      'Repeat the password',
      h('input', { name: 'again', type: 'password', autocomplete: 'new-password', required: true }),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Set password and sign in'),
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    const v = formValues(form)
    document.querySelector('#problems')?.replaceChildren()
    if (v.password !== v.again) {
      showError(new Error('the two passwords differ'))
      return
    }
    try {
      await acceptInvite(token, v.password ?? '')
      onDone()
    } catch (err) {
      showError(err)
    }
  })
  if (!token) showError(new Error('this link has no invitation in it: ask for a new one'))
  return form
}
