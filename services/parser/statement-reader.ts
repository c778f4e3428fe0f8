import { layoutOf, type StatementLayout } from './layouts.ts'
import { StatementProof } from './statement-proof.ts'
import {
  COLUMNS,
  type Column,
  emptyCells,
  headerOf,
  isContinuation,
  isTableRow,
  joinDetails,
  labelOf,
  parseStatementRow,
  type StatementCells,
  type StatementChunk,
  type StatementRead,
} from './statement-row.ts'

const RECEIPT_LABELS = new Set<string>(COLUMNS.receipt)

/**
 * Whether a receipt cell may be the receipt column's label: a receipt number (`SC12AB34CD`) is
 * capitals and digits alone, which of the labels only `RECEIPT` is. Saves normalising every row's
 * receipt to compare it with the labels.
 */
function mayBeLabel(cell: string): boolean {
  for (let i = 0; i < cell.length; i++) {
    const c = cell.charCodeAt(i)
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57))) return true
  }
  return cell === 'RECEIPT'
}

/** Lines outside the detailed table kept for the layout's totals, at most. */
const MAX_TEXT_LINES = 2000

/**
 * The one seam every statement file goes through, whatever its format (CSV, PDF, spreadsheet):
 * a reader hands it the file's lines in order, and it finds the detailed table's header, the
 * layout (layouts.ts), the rows and their continuation lines, and notes every row for the proof
 * (statement-proof.ts). Text outside the table (preamble, SUMMARY, footers) is kept for the
 * layout's totals. A row is held until the next line is seen, since a wrapped cell's rest comes
 * on the line below.
 */
export class StatementReader {
  columns: Record<Column, number> | null = null
  layout: StatementLayout | null = null
  private readonly lines: string[] = []
  private readonly proof = new StatementProof()
  private held: { cells: StatementCells; row: number } | null = null
  private width = 0
  /** The columns the header has, with their positions. */
  private present: Array<[Column, number]> | undefined
  private found: string | undefined
  private readonly counts = { read: 0, kept: 0, skipped: 0, rejected: 0 }
  private readonly note = this.proof.note.bind(this.proof)
  private readonly now: number

  constructor(private readonly opts: { timeZone: string; now?: number }) {
    this.now = opts.now ?? Date.now()
  }

  get headerFound(): boolean {
    return this.columns !== null
  }

  /** A line of text outside the table: the preamble, a SUMMARY row, a footer. */
  text(cells: string[]): void {
    const line = cells
      .map((c) => c.trim())
      .filter(Boolean)
      .join(' ')
    if (!line) return
    if (this.lines.length < MAX_TEXT_LINES) this.lines.push(line)
    // The first header-like line of a file whose header is never found, for the refusal.
    if (!this.columns && !this.found && cells.filter((c) => c.trim()).length >= 3) {
      this.found = cells.map((c) => c.trim()).join(', ')
    }
  }

  /**
   * The table's header, if `labels` is one: the first sets the columns and the layout; a header
   * repeated on a later page is passed over. True when it was a header.
   */
  header(labels: string[]): boolean {
    const at = headerOf(labels)
    if (!at) return false
    if (!this.columns) {
      this.columns = at
      this.width = labels.length
      this.layout = layoutOf(at, this.lines.join('\n'))
    }
    return true
  }

  /** A CSV (or spreadsheet) record, whatever it is: preamble, header, row or continuation. */
  record(raw: string[], recordNo: number, out: StatementChunk): void {
    if (!this.columns) {
      if (!this.header(raw)) this.text(raw)
      return
    }
    // A header repeated on a later page: tried only when its receipt cell reads as that label
    // (trying every row cost a fifth of reading a 100,000-row file).
    const first = raw[this.columns.receipt]
    if (first && mayBeLabel(first) && RECEIPT_LABELS.has(labelOf(first)) && this.header(raw)) return
    this.row(this.cellsOf(raw), recordNo, out)
  }

  /**
   * A line cut into the table's cells. `continues` says whether it carries the rest of the held
   * row's wrapped cells (a PDF reader knows from the geometry); by default a line with text but
   * no receipt, time or amount does.
   */
  row(cells: StatementCells, row: number, out: StatementChunk, continues?: boolean): void {
    if (this.held && (continues ?? isContinuation(cells))) {
      joinDetails(this.held.cells, cells)
      return
    }
    this.flush(out)
    if (isContinuation(cells)) return
    if (!isTableRow(cells)) {
      // A SUMMARY line, a total or a footer between or after the table's rows.
      if (!cells.paidIn && !cells.withdrawn && !cells.balance) return
      this.text(Object.values(cells))
      return
    }
    this.held = { cells, row }
  }

  /** Reads the held row, if any, into `out`. */
  flush(out: StatementChunk): void {
    const held = this.held
    if (!held) return
    this.held = null
    const r = parseStatementRow(held.cells, held.row, this.opts.timeZone, out, this.note, this.now)
    if (r === 'none') return
    this.counts.read++
    this.counts[r]++
  }

  /** What the file was: its header, layout, row counts and proof. Call after the last flush. */
  finish(): StatementRead {
    const layout = this.layout
    if (layout) this.proof.setTotals(layout.totals(this.lines))
    return {
      headerFound: this.columns !== null,
      rows: this.counts.read,
      ...(this.found && !this.columns ? { found: this.found } : {}),
      ...(layout ? { layout: { id: layout.id, name: layout.name } } : {}),
      counts: { ...this.counts },
      proof: this.proof.verdict(),
    }
  }

  /**
   * A record's cells by column. A converter that split a Details cell in two (more cells than the
   * header) has the extra text folded back into Details, so the amounts stay under their labels.
   */
  private cellsOf(raw: string[]): StatementCells {
    const h = this.columns!
    let cells = raw
    let end = raw.length
    while (end > this.width && !raw[end - 1]?.trim()) end--
    if (end < raw.length) cells = raw.slice(0, end)
    const extra = cells.length - this.width
    if (extra > 0 && h.details >= 0) {
      const d = h.details
      cells = [
        ...raw.slice(0, d),
        raw.slice(d, d + extra + 1).join(' '),
        ...raw.slice(d + extra + 1),
      ]
    }
    const out = emptyCells()
    this.present ??= (Object.keys(h) as Column[]).filter((k) => h[k] >= 0).map((k) => [k, h[k]])
    for (const [key, i] of this.present) out[key] = (cells[i] ?? '').trim()
    return out
  }
}
