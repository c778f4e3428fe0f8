import { COLUMNS, type Column, headerOf, type StatementCells } from './statement-row.ts'

/**
 * The geometry of a statement PDF: pdf.js gives text pieces with positions, a table has none. These
 * group pieces into lines by their baseline, find the detailed table's header (its labels may wrap
 * over two or three lines) and cut a line into cells at the x positions of the header's columns.
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

/**
 * Where each column lies on the page: [left, right) bands cut halfway between header labels. A
 * label the reader does not know (a Currency column, say) keeps a band of its own, column null,
 * so its text does not fall into a neighbour's cell.
 */
export interface TableColumns {
  bands: Array<{ column: Column | null; left: number; right: number }>
  left: number
  right: number
}

/** The header found on a page: its labels (for the statement reader), columns, and its lines. */
export interface HeaderAt {
  labels: string[]
  table: TableColumns
  /** Index of the header's first and last line on the page. */
  first: number
  last: number
}

/** Header lines wrap within this many line heights of each other. */
const HEADER_GAP = 2
/** Lines a header cell may wrap over. */
const HEADER_LINES = 3

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

interface Cluster {
  left: number
  right: number
  pieces: TextPiece[]
}

/**
 * The header cells of a run of lines: words on one line a space apart are one label, and pieces
 * on the lines below that overlap a label across are the rest of it ("Transaction" / "Status").
 */
function clustersOf(lines: Line[]): Cluster[] {
  const clusters: Cluster[] = []
  for (const line of lines) {
    // Words of one label on this line first.
    const words: Cluster[] = []
    for (const p of line.pieces) {
      const last = words.at(-1)
      if (last && p.x - last.right <= Math.max(1, p.size * 0.6)) {
        last.right = Math.max(last.right, p.x + p.width)
        last.pieces.push(p)
      } else words.push({ left: p.x, right: p.x + p.width, pieces: [p] })
    }
    for (const w of words) {
      const over = clusters.filter((c) => w.left < c.right + 0.5 && w.right > c.left - 0.5)
      if (over.length !== 1) {
        if (over.length > 1) return []
        clusters.push(w)
        continue
      }
      const c = over[0]!
      c.left = Math.min(c.left, w.left)
      c.right = Math.max(c.right, w.right)
      c.pieces.push(...w.pieces)
    }
  }
  return clusters.sort((a, b) => a.left - b.left)
}

const labelText = (c: Cluster) =>
  c.pieces
    .map((p) => p.text.trim())
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()

function columnsFrom(clusters: Cluster[], size: number): TableColumns | null {
  const labels = clusters.map(labelText)
  const at = headerOf(labels)
  if (!at) return null
  const byIndex = new Map<number, Column>()
  for (const c of Object.keys(COLUMNS) as Column[]) if (at[c] >= 0) byIndex.set(at[c], c)
  const bands = clusters.map((c, i) => {
    const prev = clusters[i - 1]
    const next = clusters[i + 1]
    return {
      column: byIndex.get(i) ?? null,
      left: prev ? (prev.right + c.left) / 2 : Number.NEGATIVE_INFINITY,
      right: next ? (c.right + next.left) / 2 : Number.POSITIVE_INFINITY,
    }
  })
  const first = clusters[0]!
  const last = clusters.at(-1)!
  // Text further than a column's width outside the header's extent is not the table's.
  const margin = Math.max(first.right - first.left, last.right - last.left, size * 6)
  return { bands, left: first.left - margin, right: last.right + margin }
}

/** The columns of the detailed table if `line` alone is its header row, else null. */
export function tableColumnsOf(line: Line): TableColumns | null {
  return columnsFrom(clustersOf([line]), line.size)
}

/**
 * The detailed table's header among a page's lines: one line, or a header whose cells wrap over
 * up to three lines set within two line heights of each other. Of the runs of lines that read as
 * a header, the one naming the most columns wins (a "Transaction" / "Status" cell read from its
 * first line alone would leave the status column out). Null when the page has none.
 */
export function findHeader(lines: Line[], from = 0): HeaderAt | null {
  for (let i = from; i < lines.length; i++) {
    let best: HeaderAt | null = null
    let bestCount = 0
    for (let k = 1; k <= HEADER_LINES && i + k <= lines.length; k++) {
      const run = lines.slice(i, i + k)
      const gap = k > 1 ? run[k - 2]!.y - run[k - 1]!.y : 0
      if (gap > HEADER_GAP * Math.max(run[k - 2]?.size ?? 1, run[k - 1]!.size)) break
      const clusters = clustersOf(run)
      const table = clusters.length >= 3 ? columnsFrom(clusters, run[0]!.size) : null
      if (!table) continue
      const count = table.bands.filter((b) => b.column).length
      if (count > bestCount) {
        bestCount = count
        best = { labels: clusters.map(labelText), table, first: i, last: i + k - 1 }
      }
    }
    if (best) return best
  }
  return null
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
    let bestOverlap = Number.NEGATIVE_INFINITY
    let crossed = 0
    for (const b of table.bands) {
      const overlap = Math.min(end, b.right) - Math.max(start, b.left)
      if (overlap > 0.5) crossed++
      if (overlap > bestOverlap) {
        bestOverlap = overlap
        best = b.column
      }
    }
    if (crossed >= 3) return null
    if (!best) continue
    cells[best] = cells[best] ? `${cells[best]} ${p.text.trim()}` : p.text.trim()
  }
  return cells
}

/**
 * Page furniture a statement repeats or ends with: page numbers, the title, the generated-on stamp,
 * disclaimers and terms. Never a row, never the rest of one.
 */
export const PAGE_FURNITURE = new RegExp(
  [
    String.raw`^page\s*\d+(\s*(of|/)\s*\d+)?$`,
    String.raw`^\d+\s*(of|/)\s*\d+$`,
    String.raw`^\d{1,4}$`,
    String.raw`^(m-?pesa|mpesa)\s+(full\s+)?statement$`,
    '^detailed statement$',
    String.raw`^(generated|printed|produced|created)\s+(on|at|by)\b`,
    String.raw`^disclaimer\b`,
    'terms and conditions',
    String.raw`^this (is a|record|statement)\b`,
    String.raw`^\*+\s*end of statement`,
  ].join('|'),
  'i',
)

/**
 * The first line of a page's footer block (the disclaimer, the statement verification code and
 * the code itself on a line of its own, which reads like a receipt): it and every line below it
 * on the page are furniture.
 */
export const FOOTER_START = /^(disclaimer\b|statement verification code|for self-help)/i

export const lineText = (line: Line) =>
  line.pieces
    .map((p) => p.text.trim())
    .join(' ')
    .trim()
