/**
 * CSV lines exactly as `Papa.unparse` writes them (CRLF, quotes only where Papa puts them), with
 * cells a spreadsheet would run as formulas neutralised. Everything is made inside one function
 * with no import and no outside name, because the export's worker threads run its source text
 * (csv-slices.ts): a source string needs no file of its own in the single executable.
 */
export function csvKit() {
  /** Papa's own rule for when a field needs quotes (BAD_DELIMITERS, the delimiter, edge spaces). */
  const NEEDS_QUOTES = /[\r\n",\ufeff]|^ | $/
  /**
   * CSV injection (OWASP): a spreadsheet runs a cell starting with = + - @ tab or CR (and, in
   * some locales, their full-width forms) as a formula, e.g. a counterparty named
   * `=HYPERLINK(...)`. Leading spaces are looked through because some importers trim them.
   */
  const FORMULA_START = /^[ ]*[=+\-@\t\r\uff1d\uff0b\uff0d\uff20]/
  /** A plain decimal number cannot be a formula: `-500.00` or `+254712345678` stay readable. */
  const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
  /**
   * Cells that need neither quotes nor a formula guard: no first character that could start a
   * formula (a leading space included, since FORMULA_START looks through spaces) and nothing
   * NEEDS_QUOTES looks for. One test instead of two for the common cell; a match only means
   * the careful path decides.
   */
  const MAYBE_SPECIAL = /^[ =+\-@\t\r\uff1d\uff0b\uff0d\uff20]|[\r\n",\ufeff]| $/

  /**
   * A cell as it is safe to write: text that a spreadsheet would run as a formula gets a leading
   * single quote, which shows the text as typed. Numbers, and text that is only a number, stay.
   */
  function neutraliseCell(v: unknown): unknown {
    return typeof v === 'string' && FORMULA_START.test(v) && !PLAIN_NUMBER.test(v) ? `'${v}` : v
  }

  /** Papa's `safe()`: empty for null, quotes doubled and the field quoted when it needs it. */
  function field(v: unknown): string {
    if (v == null) return ''
    const text = String(v).replace(/"/g, '""')
    return NEEDS_QUOTES.test(text) ? `"${text}"` : text
  }

  /**
   * One CSV line for a row without anything to quote, built without a pass per field and
   * rule; null when a cell needs quotes.
   */
  function plainLine(row: readonly unknown[]): string | null {
    let line = ''
    for (let i = 0; i < row.length; i++) {
      let v = row[i]
      if (typeof v === 'string') {
        if (MAYBE_SPECIAL.test(v)) {
          v = neutraliseCell(v)
          if (typeof v === 'string' && NEEDS_QUOTES.test(v)) return null
        }
      } else if (v == null) v = ''
      line = i === 0 ? `${v}` : `${line},${v}`
    }
    return line
  }

  /**
   * A page of rows as CSV lines, formula cells neutralised, the rows that need quoting field by
   * field. Each line is one flat string joined once per page: a page-long chain of
   * concatenations made encoding the page cost more than building it.
   */
  function unparsePage(rows: readonly unknown[][]): string {
    const lines: string[] = []
    for (const r of rows)
      lines.push(plainLine(r) ?? r.map((v) => field(neutraliseCell(v))).join(','))
    lines.push('')
    return lines.join('\r\n')
  }

  /**
   * A page of EXPORT_SELECT rows as CSV: cents as the API's decimal amounts (toMajor's
   * arithmetic, the kernel's money rule), then unparsePage.
   */
  function exportPage(rows: unknown[][]): string {
    for (const r of rows) {
      r[2] = Math.round(r[2] as number) / 100
      if (r[8] !== null) r[8] = Math.round(r[8] as number) / 100
    }
    return unparsePage(rows)
  }

  return { neutraliseCell, unparsePage, exportPage }
}

export const { neutraliseCell, unparsePage, exportPage } = csvKit()

/** The read-back fields (DESIGN §11) in VIEW_FIELDS order; `id` and `occurred_at` lead (keyset). */
export const EXPORT_SELECT = `SELECT id, occurred_at, amount_cents, direction, counterparty_name,
  counterparty_phone, description, receipt_number, balance_cents, category, category_confidence,
  category_source, source, user_id FROM transactions INDEXED BY transactions_time`
