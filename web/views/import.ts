import { scoped, upload } from '../api.ts'
import { h, num, section, showError, table } from '../ui.ts'

interface ImportResult {
  import_id: string
  accepted: number
  duplicates: number
  rejected: number
  skipped: number
  errors: { row?: number; index?: number; field?: string; message: string }[]
}

/**
 * Statement upload: an M-Pesa statement as CSV or PDF (with the PDF's password), its upload
 * progress, then what the import did with every row.
 */
export async function importView(root: HTMLElement): Promise<void> {
  const bar = h('progress', { max: 100, value: 0, hidden: true, 'aria-label': 'Upload progress' })
  const status = h('p', { role: 'status', id: 'import-status' })
  const result = h('div', { id: 'import-result' })
  const file = h('input', {
    name: 'file',
    type: 'file',
    accept: '.csv,.pdf,text/csv,application/pdf',
    required: true,
  }) as HTMLInputElement
  const passwordField = h(
    'label',
    { hidden: true },
    'PDF password (Safaricom sends it with the statement, usually your ID number)',
    h('input', { name: 'password', type: 'password', autocomplete: 'off' }),
  )
  file.addEventListener('change', () => {
    passwordField.hidden = !/\.pdf$/i.test(file.files?.[0]?.name ?? '')
  })
  const button = h('button', { type: 'submit', class: 'primary' }, 'Import') as HTMLButtonElement
  const form = h(
    'form',
    { class: 'stack', id: 'import-form', 'aria-label': 'Import a statement' },
    h('label', {}, 'Statement file (CSV or PDF)', file),
    passwordField,
    button,
    bar,
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    const data = new FormData(form)
    if (passwordField.hidden) data.delete('password')
    button.disabled = true
    bar.hidden = false
    bar.setAttribute('value', '0')
    result.replaceChildren()
    status.textContent = 'Uploading…'
    try {
      const r = await upload<ImportResult>(scoped('/api/v1/statements'), data, (sent, total) => {
        if (total) bar.setAttribute('value', String(Math.round((sent / total) * 100)))
        if (sent === total) status.textContent = 'Reading the statement…'
      })
      status.textContent = `Imported: ${num(r.accepted)} new transactions.`
      result.replaceChildren(resultOf(r))
    } catch (err) {
      status.textContent = 'The import failed.'
      showError(err)
    } finally {
      button.disabled = false
      bar.hidden = true
    }
  })
  root.append(
    section(
      'Import an M-Pesa statement',
      h(
        'p',
        { class: 'muted' },
        'Download a statement from the M-Pesa app or *334#, then upload it here. Rows already imported are recognised by their receipt number and counted once.',
      ),
      form,
      status,
      result,
    ),
  )
}

function resultOf(r: ImportResult): HTMLElement {
  const figures = h(
    'dl',
    { class: 'figures' },
    [
      ['Added', r.accepted],
      ['Already there', r.duplicates],
      ['Skipped (not transactions)', r.skipped],
      ['Rejected', r.rejected],
    ].map(([label, n]) =>
      h(
        'div',
        { 'data-figure': String(label) },
        h('dt', {}, String(label)),
        h('dd', {}, num(Number(n))),
      ),
    ),
  )
  return h(
    'div',
    {},
    figures,
    r.errors.length
      ? table(
          ['Row', 'Field', 'Why it was rejected'],
          r.errors.map((e) => [
            e.row !== undefined ? num(e.row) : e.index !== undefined ? num(e.index + 1) : '—',
            e.field ?? '',
            e.message,
          ]),
          { id: 'import-errors' },
        )
      : null,
    h('p', {}, h('a', { href: '#/transactions' }, 'See the transactions')),
  )
}
