import {
  cellsOf,
  FOOTER_START,
  type Line,
  lineText,
  PAGE_FURNITURE,
  type TableColumns,
} from './pdf-lines.ts'
import type { StatementReader } from './statement-reader.ts'
import { emptyCells, type StatementCells, type StatementChunk } from './statement-row.ts'

/**
 * The rows of a statement PDF's detailed table, rebuilt from the lines of each page. A row is an
 * anchor line (a receipt, a time or an amount) and the lines of wrapped text that belong to it:
 * below it when cells are set at the top of their row, above and below it when a layout centres
 * its cells vertically. Which way a file does it is read from its geometry: the larger gap between
 * two rows' text, or failing that an anchor set between two lines of Details with none of its own.
 * A row's text may run over the page break, under the next page's repeated header.
 */

/** Wrapped text sits within this many line heights of the line above it. */
const WRAP_GAP = 2.5
/** A gap this much wider than the others in a run of text lines is the border between two rows. */
const ROW_GAP_RATIO = 1.25

const RECEIPT = /^[A-Z0-9]{6,20}$/i
const TIME_LIKE = /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}/
const CLOCK = /^\d{1,2}:\d{2}(:\d{2})?(\s*[ap]\.?m\.?)?$/i
const AMOUNT = /\d/
const STATUS_WORD = /^(completed|failed|cancelled|canceled|declined|pending|expired|reversed)$/i

interface Item {
  top: number
  bottom: number
  size: number
  cells: StatementCells
  anchor: boolean
}

interface Row {
  no: number
  /** Lines of the row, top first: its text above the anchor, the anchor, its text below. */
  parts: StatementCells[]
  /** Text lines above the anchor, and below it so far (a centred row has as many of each). */
  above: number
  below: number
}

const isAnchor = (c: StatementCells) =>
  RECEIPT.test(c.receipt) ||
  TIME_LIKE.test(c.time) ||
  AMOUNT.test(c.paidIn) ||
  AMOUNT.test(c.withdrawn) ||
  AMOUNT.test(c.balance)

const ANCHOR_CELLS = ['receipt', 'time', 'paidIn', 'withdrawn', 'balance'] as const

/** Two anchor lines that are halves of one row: one has the receipt, the other the time, say. */
function halves(a: Item, b: Item): boolean {
  if (a.bottom - b.top > 1.5 * Math.max(a.size, b.size)) return false
  for (const k of ANCHOR_CELLS) if (a.cells[k] && b.cells[k]) return false
  return !(RECEIPT.test(a.cells.receipt) && TIME_LIKE.test(a.cells.time))
}

/** The cells of a row's lines as one row: text cells joined top to bottom, a wrapped status too. */
function mergeParts(parts: StatementCells[]): StatementCells {
  const out = emptyCells()
  for (const p of parts) {
    for (const k of Object.keys(out) as Array<keyof StatementCells>) {
      const v = p[k]
      if (!v) continue
      const have = out[k]
      if (!have) out[k] = v
      else if (k === 'status' && !STATUS_WORD.test(have)) out[k] = `${have}${v}`
      else out[k] = `${have} ${v}`
    }
  }
  return out
}

export class PdfRows {
  private held: Row | null = null
  private rowNo = 0
  /** Whether cells are centred in their rows: decided by the first page that shows it. */
  private centred = false

  constructor(
    private readonly reader: StatementReader,
    private readonly table: TableColumns,
  ) {}

  /** The table's lines of one page (below its header, if repeated), top of the page first. */
  page(lines: Line[], out: StatementChunk): void {
    const items: Item[] = []
    for (const line of lines) {
      const text = lineText(line)
      if (FOOTER_START.test(text)) break
      if (PAGE_FURNITURE.test(text)) continue
      const cells = cellsOf(line, this.table)
      if (!cells) {
        this.reader.text(line.pieces.map((p) => p.text))
        continue
      }
      const item: Item = {
        top: line.y,
        bottom: line.y,
        size: line.size,
        cells,
        anchor: isAnchor(cells),
      }
      const last = items.at(-1)
      if (last?.anchor && item.anchor && halves(last, item)) {
        last.cells = mergeParts([last.cells, cells])
        last.bottom = line.y
        continue
      }
      items.push(item)
    }
    this.centred ||= items.some((_, i) => this.sandwiched(items, i))
    this.assign(items, out)
  }

  /** An anchor with no Details of its own between two lines of Details: a centred layout. */
  private sandwiched(items: Item[], i: number): boolean {
    const it = items[i]!
    const up = items[i - 1]
    const down = items[i + 1]
    return (
      it.anchor &&
      !it.cells.details &&
      !!up &&
      !up.anchor &&
      !!up.cells.details &&
      up.bottom - it.top <= WRAP_GAP * it.size &&
      !!down &&
      !down.anchor &&
      !!down.cells.details &&
      it.bottom - down.top <= WRAP_GAP * it.size
    )
  }

  private assign(items: Item[], out: StatementChunk): void {
    let i = 0
    // Text above the page's first anchor: the rest of the row held from the page before, and
    // (centred) the top half of the first row here.
    const lead: Item[] = []
    while (i < items.length && !items[i]!.anchor) lead.push(items[i++]!)
    const held = this.held
    let toHeld = held ? lead.length : 0
    if (held && i < items.length && this.centred) {
      toHeld = Math.min(lead.length, Math.max(0, held.above - held.below))
    }
    for (const t of lead.slice(0, toHeld)) this.addBelow(held!, t)
    let above = lead.slice(toHeld)
    if (i === items.length) for (const t of above) this.text(t)
    while (i < items.length) {
      const anchor = items[i++]!
      const row = this.open(anchor, above, out)
      const run: Item[] = []
      while (i < items.length && !items[i]!.anchor) run.push(items[i++]!)
      const { mine, theirs, outside } = this.split(anchor, run, items[i], row)
      for (const t of mine) this.addBelow(row, t)
      for (const t of outside) this.text(t)
      above = theirs
    }
  }

  /**
   * The text lines between an anchor and the next (or the page's end): which belong to this row,
   * which to the next one (centred), which to neither (too far below: a footer).
   */
  private split(anchor: Item, run: Item[], next: Item | undefined, row: Row) {
    let bottom = anchor.bottom
    let near = 0
    for (const t of run) {
      if (bottom - t.top > WRAP_GAP * Math.max(t.size, anchor.size)) break
      bottom = t.bottom
      near++
    }
    if (!next || near < run.length) {
      return { mine: run.slice(0, near), theirs: [], outside: run.slice(near) }
    }
    // A wrapped clock ("2024-05-01" / "10:00:00") belongs to the anchor above it.
    const clock = run[0] && CLOCK.test(run[0].cells.time) && !/\d:\d/.test(anchor.cells.time)
    const head = clock ? 1 : 0
    const rest = run.slice(head)
    const chain = [head ? run[0]! : anchor, ...rest, next]
    const gaps = chain.slice(1).map((it, k) => chain[k]!.bottom - it.top)
    let at = rest.length
    if (rest.length) {
      const max = Math.max(...gaps)
      const min = Math.min(...gaps)
      if (max > min * ROW_GAP_RATIO && gaps.filter((g) => g === max).length === 1) {
        at = gaps.indexOf(max)
      } else if (this.centred) at = Math.min(rest.length, Math.max(0, row.above - row.below))
    }
    return { mine: run.slice(0, head + at), theirs: rest.slice(at), outside: [] }
  }

  private text(t: Item): void {
    this.reader.text(Object.values(t.cells))
  }

  private open(anchor: Item, above: Item[], out: StatementChunk): Row {
    this.emit(out)
    const row: Row = {
      no: ++this.rowNo,
      parts: [...above.map((t) => t.cells), anchor.cells],
      above: above.length,
      below: 0,
    }
    this.held = row
    return row
  }

  private addBelow(row: Row, t: Item): void {
    row.parts.push(t.cells)
    row.below++
  }

  /** Hands the held row to the reader: it is complete once the next row begins. */
  emit(out: StatementChunk): void {
    const row = this.held
    if (!row) return
    this.held = null
    this.reader.row(mergeParts(row.parts), row.no, out, false)
  }
}
