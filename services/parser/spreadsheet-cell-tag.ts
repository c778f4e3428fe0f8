import { isSpace } from './xml-scan.ts'

/**
 * A worksheet cell's `<c …>` tag and its commonest content, read straight off the sheet's text
 * (spreadsheet-rows.ts): the hot loop of a sheet's million cells, so nothing is cut out of the
 * text that is not kept and no object is made per cell.
 */

/**
 * Columns read, at most: Excel 2003's 256 (a statement has 14). A sheet may go on to XFD, but a
 * hostile one with a cell there in every row would make each row 16,384 cells to look through.
 */
export const MAX_COLUMNS = 256

/** What `readCellTag` read: the cell's zero-based column, type (`t`) and style (`s`). */
export const cellTag = { col: 0, type: 'n', style: 0 }

/**
 * A `<c>`'s attributes from `from` (just after its name) on, into `cellTag`; `col` is the column
 * when the tag names none. Its attributes are one-letter names, read in one pass without cutting
 * each name out. Returns where the tag's `>` is, or -1 when `to` (or an attribute that is not
 * `name="value"`) came first.
 */
export function readCellTag(src: string, from: number, to: number, col: number): number {
  cellTag.col = col
  cellTag.type = 'n'
  cellTag.style = 0
  const gt = commonCellTag(src, from, to)
  if (gt !== SOME_OTHER_FORM) return gt
  cellTag.col = col
  cellTag.type = 'n'
  cellTag.style = 0
  for (let i = from; ; ) {
    // The next `=` or `>` inside the tag (a search past its end could run to the end of the piece).
    let eq = i
    let c = src.charCodeAt(eq)
    while (eq < to && c !== 61 && c !== 62) c = src.charCodeAt(++eq)
    if (eq >= to) return -1
    if (c === 62) return eq
    let q = eq + 1
    while (isSpace(src.charCodeAt(q))) q++
    const quote = src.charCodeAt(q)
    if (quote !== 34 && quote !== 39) return -1
    const close = src.indexOf(quote === 34 ? '"' : "'", q + 1)
    if (close < 0 || close >= to) return -1
    let k = eq - 1
    while (isSpace(src.charCodeAt(k))) k--
    const before = src.charCodeAt(k - 1)
    if (isSpace(before) || before === 58 /* : */) {
      const name = src.charCodeAt(k)
      if (name === 114 /* r */) cellTag.col = columnAt(src, q + 1)
      else if (name === 116 /* t */) cellTag.type = cellType(src, q + 1, close)
      else if (name === 115 /* s */) cellTag.style = numberAt(src, q + 1, close)
    }
    i = close + 1
  }
}

const SOME_OTHER_FORM = -2

/**
 * `readCellTag` for the form nearly every writer uses, ` r="B9" t="str" s="3"` (one space before
 * each attribute, none around `=`, double quotes), with an index search for each value's end
 * instead of a look at every character; `SOME_OTHER_FORM` for anything else.
 */
function commonCellTag(src: string, from: number, to: number): number {
  for (let i = from; i < to; ) {
    const c = src.charCodeAt(i)
    if (c === 62 /* > */) return i
    if (c === 47 /* / */)
      return src.charCodeAt(i + 1) === 62 && i + 1 < to ? i + 1 : SOME_OTHER_FORM
    if (c !== 32) return SOME_OTHER_FORM
    const name = src.charCodeAt(i + 1)
    let eq = i + 2
    // A longer name (`cm`, `vm`, `ph`) is passed over; a prefixed one is for the general loop.
    if (src.charCodeAt(eq) !== 61)
      for (let n = src.charCodeAt(eq); n !== 61; n = src.charCodeAt(++eq))
        if (eq >= to || n === 58 || n === 32 || n === 62 || n === 34 || n === 39)
          return SOME_OTHER_FORM
    if (src.charCodeAt(eq + 1) !== 34) return SOME_OTHER_FORM
    const close = src.indexOf('"', eq + 2)
    if (close < 0 || close >= to) return SOME_OTHER_FORM
    if (eq === i + 2) {
      if (name === 114 /* r */) cellTag.col = columnAt(src, eq + 2)
      else if (name === 116 /* t */) cellTag.type = cellType(src, eq + 2, close)
      else if (name === 115 /* s */) cellTag.style = numberAt(src, eq + 2, close)
    }
    i = close + 1
  }
  return SOME_OTHER_FORM
}

/**
 * A cell's content when it is one text alone, `<v>…</v></c>` or `<is><t>…</t></is></c>` (the
 * text element may have attributes), from `from` (just after the cell's `>`): the text runs from
 * `plain.from` to `plain.to`, and the cell ends at `plain.end`. False when the content is anything
 * else (rich text, a formula, CDATA, an empty element) or not all here.
 */
export function plainContent(src: string, from: number): boolean {
  if (src.charCodeAt(from) !== 60) return false
  const inline = src.charCodeAt(from + 1) === 105 /* i */
  const name = inline ? from + 5 : from + 1
  if (inline ? !src.startsWith('is><t', from + 1) : src.charCodeAt(name) !== 118 /* v */)
    return false
  const after = src.charCodeAt(name + 1)
  const gt = after === 62 ? name + 1 : isSpace(after) ? src.indexOf('>', name + 2) : -1
  if (gt < 0 || src.charCodeAt(gt - 1) === 47) return false
  const to = src.indexOf('<', gt + 1)
  if (to < 0 || !src.startsWith(inline ? '</t></is></c>' : '</v></c>', to)) return false
  plain.from = gt + 1
  plain.to = to
  plain.end = to + (inline ? 13 : 8)
  return true
}

/** What `plainContent` found. */
export const plain = { from: 0, to: 0, end: 0 }

/** The zero-based column of the cell reference (`AB12`) at `at`. */
function columnAt(src: string, at: number): number {
  let col = 0
  for (let i = at; ; i++) {
    const c = src.charCodeAt(i) | 0x20
    if (c < 97 || c > 122) break
    col = col * 26 + (c - 96)
    if (col > MAX_COLUMNS) break
  }
  return col - 1
}

/** A whole number written from `from` to `to` (a style index), 0 when it is not one. */
function numberAt(src: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const d = src.charCodeAt(i) - 48
    if (d < 0 || d > 9) return 0
    n = n * 10 + d
  }
  return n
}

/** A cell's `t` attribute as a constant string when it is a known type (no text cut out). */
function cellType(src: string, from: number, to: number): string {
  const first = src.charCodeAt(from)
  switch (to - from) {
    case 1:
      if (first === 115) return 's'
      if (first === 110) return 'n'
      if (first === 98) return 'b'
      if (first === 101) return 'e'
      if (first === 100) return 'd'
      break
    case 3:
      if (first === 115 && src.charCodeAt(from + 1) === 116 && src.charCodeAt(from + 2) === 114)
        return 'str'
      break
    case 9:
      if (first === 105 && src.startsWith('inlineStr', from)) return 'inlineStr'
  }
  return src.slice(from, to)
}
