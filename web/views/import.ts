import { scoped, upload } from '../api.ts'
import { h, num, section, showError, skeleton, table } from '../ui.ts'
import { importsTable, proofBlock, type StatementImport } from './statement-proof.ts'

interface ImportResult extends StatementImport {
  errors: { row?: number; index?: number; field?: string; message: string }[]
}

/**
 * Statement upload: an M-Pesa statement as CSV or PDF (with the PDF's password), its upload
 * progress, then what the import did with every row and whether the statement adds up; below,
 * the past imports with their proof.
 */
export async function importView(root: HTMLElement): Promise<void> {
  const bar = h('progress', { max: 100, value: 0, hidden: true, 'aria-label': 'Upload progress' })
  const status = h('p', { role: 'status', id: 'import-status' })
  const result = h('div', { id: 'import-result' })
  const past = h('div', { id: 'past-imports' }, skeleton())
  const showPast = () =>
    importsTable()
      .then((t) => past.replaceChildren(t))
      .catch((err) => {
        past.replaceChildren()
        showError(err)
      })
  const file = h('input', {
    name: 'file',
    type: 'file',
    accept: '.csv,.pdf,.xls,.xlsx,text/csv,application/pdf',
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
    h('label', {}, 'Statement file (PDF, CSV or Excel)', file),
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
      const r = await upload<ImportResult>(scoped('/api/v1/statements'), {
        form: data,
        onProgress: (sent, total) => {
          if (total) bar.setAttribute('value', String(Math.round((sent / total) * 100)))
          if (sent === total) status.textContent = 'Reading the statement…'
        },
      })
      status.textContent =
        r.proof?.verdict === 'does_not_add_up'
          ? `Imported ${num(r.accepted)} new transactions, but the statement does not add up.`
          : `Imported: ${num(r.accepted)} new transactions.`
      result.replaceChildren(resultOf(r))
      void showPast()
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
    section('Past imports', past),
  )
  await showPast()
}

function resultOf(r: ImportResult): HTMLElement {
  return h(
    'div',
    {},
    proofBlock(r),
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
