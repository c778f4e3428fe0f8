/**
 * A SAX-style scanner for the XML inside an XLSX: it takes text a piece at a time and tells its
 * handler of each start tag, end tag and run of character data, in order, holding only the
 * piece of markup that straddles two pieces. It knows what SpreadsheetML needs (elements,
 * attributes, character data, CDATA, the five named entities and character references, and
 * skips comments and processing instructions); a document type declaration is refused, so no
 * entity is ever expanded. Names lose their namespace prefix (`x:c` is `c`).
 *
 * Why not a general SAX library: a 100,000-row statement's sheet is ~60 MB of XML, and the
 * general parsers tried (saxes, htmlparser2) took 2.8–3.6 s over it where this takes a tenth
 * of that, which is the difference between reading a statement within its second or not.
 */
export interface XmlHandler {
  /** A start tag: its local name, the whole tag's text (for `attr`), and whether it is `<… />`. */
  open(name: string, tag: string, empty: boolean): void
  close(name: string): void
  /** Raw character data (entities not yet decoded: `decodeXml`), possibly in several runs. */
  text(raw: string): void
  /**
   * An element named in the scanner's `whole` set, in one call (a sheet's cell or a shared
   * string: one call where five would do, and no text cut out that is not needed): its start
   * tag's attributes are `src` from `tagFrom` to `tagTo`, its content, raw XML, from `from` to `to`.
   */
  element?(
    name: string,
    src: string,
    tagFrom: number,
    tagTo: number,
    from: number,
    to: number,
  ): void
  /**
   * Markup at `lt` the handler may read itself, faster than tag by tag (a sheet's common cells):
   * where it ends, or 0 to leave it to the scanner (also when it is not all here yet).
   */
  markup?(src: string, lt: number): number
}

export class XmlError extends Error {}

/** Markup longer than this (a tag, comment or CDATA section) is not a spreadsheet's. */
const MAX_MARKUP = 4 * 1024 * 1024

export class XmlScanner {
  private rest = ''

  /** `whole`: local names of elements (never nested in themselves) handed over in one piece. */
  constructor(
    private readonly h: XmlHandler,
    private readonly whole?: ReadonlySet<string>,
  ) {}

  write(piece: string): void {
    if (this.rest) {
      // Only the markup left open is joined to the start of the piece, not the whole piece
      // (a copy of every piece would double the text a large sheet passes through).
      const open = this.rest
      for (let k = Math.min(piece.length, 4096); ; k = Math.min(piece.length, k * 4)) {
        const joined = open + piece.slice(0, k)
        const next = this.markup(joined, 0)
        if (next >= 0) {
          this.rest = ''
          this.scan(piece.slice(next - open.length))
          return
        }
        if (k === piece.length) {
          this.pending(joined)
          return
        }
      }
    }
    this.scan(piece)
  }

  /** Markup not all here yet, kept for the next piece. */
  private pending(markup: string): void {
    this.rest = markup
    if (markup.length > MAX_MARKUP) throw new XmlError('a tag runs on past any sane length')
  }

  private scan(s: string): void {
    const n = s.length
    let i = 0
    while (i < n) {
      const lt = s.indexOf('<', i)
      if (lt < 0) {
        this.h.text(s.slice(i))
        return
      }
      if (lt > i) this.h.text(s.slice(i, lt))
      const next = this.markup(s, lt)
      if (next < 0) {
        this.pending(s.slice(lt))
        return
      }
      i = next
    }
  }

  /** The end of the input: markup left open means the document was cut short. */
  end(): void {
    if (this.rest) throw new XmlError('the XML ends inside a tag')
  }

  /** Handles the markup at `lt`; the index after it, or -1 when it is not all here yet. */
  private markup(s: string, lt: number): number {
    const own = this.h.markup?.(s, lt)
    if (own) return own
    const c = s.charCodeAt(lt + 1)
    if (c === 47 /* / */) {
      const gt = s.indexOf('>', lt + 2)
      if (gt < 0) return -1
      const name = s.slice(lt + 2, gt)
      this.h.close(localName(isSpace(name.charCodeAt(name.length - 1)) ? name.trimEnd() : name))
      return gt + 1
    }
    if (c === 63 /* ? */) {
      const end = s.indexOf('?>', lt + 2)
      return end < 0 ? -1 : end + 2
    }
    if (c === 33 /* ! */) {
      if (s.startsWith('<!--', lt)) {
        const end = s.indexOf('-->', lt + 4)
        return end < 0 ? -1 : end + 3
      }
      if (s.startsWith('<![CDATA[', lt)) {
        const end = s.indexOf(']]>', lt + 9)
        if (end < 0) return -1
        // Character data that must not be decoded: written back with its markup escaped.
        this.h.text(
          s
            .slice(lt + 9, end)
            .replaceAll('&', '&amp;')
            .replaceAll('<', '&lt;'),
        )
        return end + 3
      }
      if (s.length - lt < 9) return -1
      throw new XmlError('the XML declares a document type, which a spreadsheet never does')
    }
    let e = lt + 1
    let colon = -1
    for (let c = s.charCodeAt(e); c > 32 && c !== 47 && c !== 62; c = s.charCodeAt(++e))
      if (c === 58) colon = e
    if (e >= s.length) return -1
    const gt = tagEnd(s, e)
    if (gt < 0) return -1
    const empty = s.charCodeAt(gt - 1) === 47
    const qname = s.slice(lt + 1, e)
    const name = colon < 0 ? qname : s.slice(colon + 1, e)
    if (!empty && this.whole?.has(name) && this.h.element) {
      const end = closingTag(s, qname, gt + 1)
      if (end < 0) return -1
      this.h.element(name, s, e, gt, gt + 1, end)
      return s.indexOf('>', end) + 1
    }
    this.h.open(name, s.slice(e, empty ? gt - 1 : gt), empty)
    if (empty) this.h.close(name)
    return gt + 1
  }
}

export const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13

const localName = (qname: string) => {
  const colon = qname.indexOf(':')
  return colon < 0 ? qname : qname.slice(colon + 1)
}

/** `</qname>` of the names seen, made once. */
const CLOSING = new Map<string, string>()

/** Where `</qname>` starts (from `from`), or -1 when it is not all here yet. */
function closingTag(s: string, qname: string, from: number): number {
  let close = CLOSING.get(qname)
  if (close === undefined) {
    close = `</${qname}>`
    if (CLOSING.size < 64) CLOSING.set(qname, close)
  }
  const plain = s.indexOf(close, from)
  if (plain >= 0) return plain
  // `</qname >`, with space before its `>`: rare, looked for only when the plain form is not there.
  const open = `</${qname}`
  for (let at = s.indexOf(open, from); at >= 0; at = s.indexOf(open, at + 1)) {
    let i = at + open.length
    while (isSpace(s.charCodeAt(i))) i++
    if (i >= s.length) return -1
    if (s.charCodeAt(i) === 62) return at
  }
  return -1
}

/** The `>` that ends a tag starting at `from`, skipping any inside quoted attribute values. */
export function tagEnd(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 62) return i
    if (c === 34 || c === 39) {
      const close = s.indexOf(c === 34 ? '"' : "'", i + 1)
      if (close < 0) return -1
      i = close
    }
  }
  return -1
}

/**
 * A tag's attributes one at a time: `nextAttribute(tag, at)` reads the one from `at` into
 * `attribute` and returns where the next starts, or -1 when there are no more. What a hot loop
 * over a sheet's cells uses instead of one search per attribute.
 */
export const attribute = { name: '', value: '' }

export function nextAttribute(tag: string, at: number): number {
  const n = tag.length
  while (at < n && isSpace(tag.charCodeAt(at))) at++
  const eq = tag.indexOf('=', at)
  if (eq < 0) return -1
  let q = eq + 1
  while (q < n && isSpace(tag.charCodeAt(q))) q++
  const quote = tag.charCodeAt(q)
  if (quote !== 34 && quote !== 39) return -1
  const close = tag.indexOf(quote === 34 ? '"' : "'", q + 1)
  if (close < 0) return -1
  const name = tag.slice(at, eq)
  attribute.name = localName(isSpace(name.charCodeAt(name.length - 1)) ? name.trimEnd() : name)
  const value = tag.slice(q + 1, close)
  attribute.value = value.includes('&') ? decodeXml(value) : value
  return close + 1
}

/** An attribute's value in a tag's text (`open`'s `tag`), by its local name; undefined when absent. */
export function attr(tag: string, name: string): string | undefined {
  for (let at = nextAttribute(tag, 0); at >= 0; at = nextAttribute(tag, at))
    if (attribute.name === name) return attribute.value
  return undefined
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** Character data as text: entities and character references decoded (unknown ones kept). */
export function decodeXml(raw: string): string {
  if (!raw.includes('&')) return raw
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.charCodeAt(0) !== 35) return NAMED[ref] ?? whole
    const code =
      ref.charCodeAt(1) === 120 ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1))
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
  })
}
