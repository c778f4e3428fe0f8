import { api, can, scoped } from './api.ts'
import { h, showError } from './ui.ts'

/** One download: its button's id and words, the API path and the file name it saves as. */
export interface ExportItem {
  id: string
  label: string
  path: string
  file: string
}

/**
 * Download buttons for a page's period (CSV for a spreadsheet, PDF to print or send). Hidden from
 * Viewers, whom the API refuses exports.
 */
export function exportBar(items: ExportItem[]): HTMLElement | null {
  if (!can('analyze')) return null
  return h(
    'div',
    { class: 'exports', role: 'group', 'aria-label': 'Download' },
    items.map((i) => {
      const button = h('button', { type: 'button', class: 'small', id: i.id }, i.label)
      button.addEventListener('click', async () => {
        button.setAttribute('aria-busy', 'true')
        try {
          await api.download(scoped(i.path), i.file)
        } catch (err) {
          showError(err)
        } finally {
          button.removeAttribute('aria-busy')
        }
      })
      return button
    }),
  )
}

/** CSV and PDF of one owner report (customers, insights, reconciliation) for a period. */
export const reportExports = (
  report: 'customers' | 'insights' | 'reconciliation',
  query: string,
  stem: string = report,
): ExportItem[] =>
  (['csv', 'pdf'] as const).map((format) => ({
    id: `export-${stem}-${format}`,
    label: `Download ${format.toUpperCase()}`,
    path: `/api/v1/analytics/reports/${report}?format=${format}&${query}`,
    file: `${stem}.${format}`,
  }))
