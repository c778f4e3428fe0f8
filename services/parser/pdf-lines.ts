import { COLUMNS, type Column, headerOf, type StatementCells } from './statement-row.ts'

/**
 * The geometry of a statement PDF: pdf.js gives text pieces with positions, a table has none. These
 * group pieces into lines by their baseline and cut a line into cells at the x positions of the
 * detailed table's header, so Details text wrapped onto further lines stays a cell of its row.
 */

/** A piece of text where pdf.js put it: x from the left, y from the bottom (PDF space), in points. */
export interface TextPiece {
  text: string
  x: number
  y: number
  width: number
  /** Font size: the line height the gaps between lines are measured against. */
  size: number
}

export interface Line {
  y: number
  size: number
  pieces: TextPiece[]
}

/** Where each column lies on the page: [left, right) bands cut halfway between header labels. */
export interface TableColumns {
  bands: Array<{ column: Column; left: number; right: number }>
  left: number
  right: number
}

/** Pieces on one baseline (within a third of the font size) as one line, top of the page first. */
export function linesOf(pieces: TextPiece[]): Line[] {
  const sorted = pieces.filter((p) => p.text.trim()).sort((a, b) => b.y - a.y || a.x - b.x)
  const lines: Line[] = []
  for (const p of sorted) {
    const last = lines.at(-1)
    if (last && Math.abs(last.y - p.y) <= Math.max(1, Math.min(last.size, p.size) / 3)) {
      last.pieces.push(p)
      last.size = Math.max(last.size, p.size)
    } else lines.push({ y: p.y, size: p.size, pieces: [p] })
  }
  for (const l of lines) l.pieces.sort((a, b) => a.x - b.x)
  return lines
}

/** The columns of the detailed table if `line` is its header row, else null. */
export function tableColumnsOf(line: Line): TableColumns | null {
  const labels = line.pieces.map((p) => p.text)
  const at = headerOf(labels)
  if (!at) return null
  const placed = (Object.keys(COLUMNS) as Column[])
    .filter((c) => at[c] >= 0)
    .map((c) => ({ column: c, piece: line.pieces[at[c]]! }))
    .sort((a, b) => a.piece.x - b.piece.x)
  const bands = placed.map((p, i) => {
    const prev = placed[i - 1]?.piece
    const next = placed[i + 1]?.piece
    return {
      column: p.column,
      left: prev ? (prev.x + prev.width + p.piece.x) / 2 : Number.NEGATIVE_INFINITY,
      right: next ? (p.piece.x + p.piece.width + next.x) / 2 : Number.POSITIVE_INFINITY,
    }
  })
  const first = placed[0]!.piece
  const last = placed.at(-1)!.piece
  // Text further than a column's width outside the header's extent is not the table's.
  const margin = Math.max(first.width, last.width, line.size * 6)
  return { bands, left: first.x - margin, right: last.x + last.width + margin }
}

/**
 * A line cut into the table's cells, or null when it is not a line of the table: text outside the
 * table, or one piece running across three or more columns (a footer or disclaimer sentence).
 * A piece belongs to the column it overlaps most, so left-aligned Details and right-aligned
 * amounts both land under their header.
 */
export function cellsOf(line: Line, table: TableColumns): StatementCells | null {
  const cells = Object.fromEntries(
    (Object.keys(COLUMNS) as Column[]).map((c) => [c, '']),
  ) as StatementCells
  for (const p of line.pieces) {
    const start = p.x
    const end = p.x + Math.max(p.width, 0.01)
    if (start < table.left || end > table.right) return null
    let best: Column | null = null
    let bestOverlap = -1
    let crossed = 0
    for (const b of table.bands) {
      const overlap = Math.min(end, b.right) - Math.max(start, b.left)
      if (overlap > 0.5) crossed++
      if (overlap > bestOverlap) {
        bestOverlap = overlap
        best = b.column
      }
    }
    if (crossed >= 3 || !best) return null
    cells[best] = cells[best] ? `${cells[best]} ${p.text.trim()}` : p.text.trim()
  }
  return cells
}

/** Page furniture a statement repeats: page numbers, the title, the generated-on stamp. */
export const PAGE_FURNITURE =
  /^(page\s+\d+(\s*(of|\/)\s*\d+)?|\d+\s*(of|\/)\s*\d+|m-?pesa statement)$/i

export const lineText = (line: Line) =>
  line.pieces
    .map((p) => p.text.trim())
    .join(' ')
    .trim()
