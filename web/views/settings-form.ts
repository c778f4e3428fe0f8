import { formValues, h, showError } from '../ui.ts'

/** A form whose submit calls the API and shows any problem it answers. */
export function formWith({
  id,
  label,
  fields,
  submit,
  onSubmit,
}: {
  id: string
  label: string
  fields: HTMLElement[]
  /** The submit button's words. */
  submit: string
  onSubmit: (v: Record<string, string>, form: HTMLFormElement) => Promise<void>
}): HTMLFormElement {
  const button = h('button', { type: 'submit' }, submit) as HTMLButtonElement
  const form = h(
    'form',
    { class: 'inline', id, 'aria-label': label },
    ...fields,
    button,
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    button.disabled = true
    try {
      await onSubmit(formValues(form), form)
      form.reset()
    } catch (err) {
      showError(err)
    } finally {
      button.disabled = false
    }
  })
  return form
}

export const field = (label: string, input: HTMLElement) => h('label', {}, label, input)

/** Copies a secret shown once; where the clipboard is refused (plain http), selects it instead. */
export function copyButton(id: string, value: string, code: HTMLElement): HTMLElement {
  const button = h('button', { type: 'button', class: 'small', id }, 'Copy')
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value)
      button.textContent = 'Copied'
    } catch {
      getSelection()?.selectAllChildren(code)
      button.textContent = 'Selected: press Ctrl+C'
    }
  })
  return button
}
