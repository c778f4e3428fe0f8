/**
 * CSV lines exactly as `Papa.unparse` writes them (CRLF, quotes only where Papa puts them), with
 * cells a spreadsheet would run as formulas neutralised. Each kit is made inside one function
 * with no import and no outside name, because the export's worker threads run its source text
 * (csv-slices.ts): a source string needs no file of its own in the single executable.
 */
export function csvTextKit() {
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

/**
 * The export's pages straight as UTF-8 bytes, the rows that need care through `unparsePage`
 * (csvTextKit's, handed in: this kit too names nothing outside itself).
 */
export function csvBytesKit(unparsePage: (rows: readonly unknown[][]) => string) {
  const encoder = new TextEncoder()

  /**
   * Appends a text cell's UTF-8 at `o` when it is plain ASCII that neither the formula guard nor
   * the quoting rule would touch: no comma, quote, CR or LF, no space at either end, and no
   * first character that can start a formula unless the text is a plain signed decimal, which
   * neutraliseCell keeps (`+254712345678`). Returns the new offset, or -1 for the careful path.
   */
  function plainText(out: Uint8Array, o: number, s: string): number {
    const n = s.length
    if (n === 0) return o
    const first = s.charCodeAt(0)
    let k = 0
    if (first === 43 || first === 45) {
      let digits = 0
      let dots = 0
      for (k = 1; k < n; k++) {
        const c = s.charCodeAt(k)
        if (c >= 48 && c <= 57) digits++
        else if (c === 46) dots++
        else return -1
      }
      if (digits === 0 || dots > 1) return -1
      k = 0
    } else if (first === 32 || first === 61 || first === 64 || first === 9 || first === 13)
      return -1
    if (s.charCodeAt(n - 1) === 32) return -1
    for (; k < n; k++) {
      const c = s.charCodeAt(k)
      if (c >= 128 || c === 44 || c === 34 || c === 10 || c === 13) return -1
      out[o++] = c
    }
    return o
  }

  /**
   * exportPage's bytes, UTF-8 as TextEncoder gives them, written straight into one buffer: an
   * ordinary row (ASCII text that needs no guard or quotes, numbers, nulls) byte by byte, any
   * other row through exportPage. No line or page string is built for ordinary rows, which was
   * most of the cost of the page after reading it.
   */
  function exportPageBytes(rows: unknown[][]): Uint8Array {
    let out = new Uint8Array(rows.length * 192)
    let o = 0
    const room = (bytes: number) => {
      if (o + bytes <= out.length) return
      const bigger = new Uint8Array(Math.max(out.length * 2, o + bytes))
      bigger.set(out.subarray(0, o))
      out = bigger
    }
    for (const r of rows) {
      r[2] = Math.round(r[2] as number) / 100
      if (r[8] !== null) r[8] = Math.round(r[8] as number) / 100
      // The plain path writes a byte per character: text lengths, a number's at most 25.
      let most = r.length + 1
      for (const v of r) most += typeof v === 'string' ? v.length : 32
      room(most)
      const start = o
      for (let i = 0; i < r.length && o >= 0; i++) {
        if (i > 0) out[o++] = 44
        const v = r[i]
        if (typeof v === 'string') o = plainText(out, o, v)
        else if (typeof v === 'number') {
          const text = String(v)
          for (let k = 0; k < text.length; k++) out[o++] = text.charCodeAt(k)
        } else if (v !== null) o = -1
      }
      if (o >= 0) {
        out[o++] = 13
        out[o++] = 10
        continue
      }
      const line = unparsePage([r])
      o = start
      room(line.length * 3)
      o += encoder.encodeInto(line, out.subarray(o)).written
    }
    return out.subarray(0, o)
  }

  return { exportPageBytes }
}

export const { neutraliseCell, unparsePage, exportPage } = csvTextKit()
export const { exportPageBytes } = csvBytesKit(unparsePage)
