import { crc32, deflateRawSync } from 'node:zlib'

/**
 * Zips and XLSX workbooks written by hand, for tests and benchmarks that need what a spreadsheet
 * program writes and SheetJS does not (shared strings with rich text, namespace prefixes, the
 * 1904 date system, a lying zip directory…), and fast enough for a 100,000-row sheet.
 */
export interface ZipFile {
  name: string
  data: string | Uint8Array
  /** Stored (0) or deflated (8, the default). */
  method?: 0 | 8
  /** The unpacked size the directory declares, when it should lie. */
  declaredSize?: number
}

export function zip(files: ZipFile[]): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder()
  const chunks: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const f of files) {
    const data = typeof f.data === 'string' ? enc.encode(f.data) : f.data
    const method = f.method ?? 8
    const packed = method === 8 ? new Uint8Array(deflateRawSync(data)) : data
    const name = enc.encode(f.name)
    const crc = crc32(data)
    const size = f.declaredSize ?? data.length
    const local = new DataView(new ArrayBuffer(30))
    local.setUint32(0, 0x04034b50, true)
    local.setUint16(4, 20, true)
    local.setUint16(8, method, true)
    local.setUint32(14, crc, true)
    local.setUint32(18, packed.length, true)
    local.setUint32(22, size, true)
    local.setUint16(26, name.length, true)
    const entry = new DataView(new ArrayBuffer(46))
    entry.setUint32(0, 0x02014b50, true)
    entry.setUint16(4, 20, true)
    entry.setUint16(6, 20, true)
    entry.setUint16(10, method, true)
    entry.setUint32(16, crc, true)
    entry.setUint32(20, packed.length, true)
    entry.setUint32(24, size, true)
    entry.setUint16(28, name.length, true)
    entry.setUint32(42, offset, true)
    chunks.push(new Uint8Array(local.buffer), name, packed)
    central.push(new Uint8Array(entry.buffer), name)
    offset += 30 + name.length + packed.length
  }
  const dirSize = central.reduce((n, c) => n + c.length, 0)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, files.length, true)
  end.setUint16(10, files.length, true)
  end.setUint32(12, dirSize, true)
  end.setUint32(16, offset, true)
  const all = [...chunks, ...central, new Uint8Array(end.buffer)]
  const out = new Uint8Array(all.reduce((n, c) => n + c.length, 0))
  let at = 0
  for (const c of all) {
    out.set(c, at)
    at += c.length
  }
  return out
}

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'

/** The parts every workbook has, around the given sheets (their `<sheetData>` XML). */
export function workbookParts(opts: {
  sheets: Array<{ name: string; data: string }>
  /** `<si>` elements, joined. */
  sharedStrings?: string
  /** Custom number formats and the cell styles' numFmtIds (style 0 first). */
  numFmts?: Array<{ id: number; code: string }>
  styles?: number[]
  date1904?: boolean
}): ZipFile[] {
  const esc = (s: string) => s.replaceAll('&', '&amp;').replaceAll('"', '&quot;')
  const rels = opts.sheets.map(
    (_, i) =>
      `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
  )
  rels.push(`<Relationship Id="rS" Type="${REL}/styles" Target="styles.xml"/>`)
  if (opts.sharedStrings !== undefined)
    rels.push(`<Relationship Id="rT" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`)
  const types = [
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>',
    ...opts.sheets.map(
      (_, i) =>
        `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
    ),
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>',
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>',
  ]
  const files: ZipFile[] = [
    {
      name: '[Content_Types].xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${types.join('')}</Types>`,
    },
    {
      name: '_rels/.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    },
    {
      name: 'xl/workbook.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${NS}" xmlns:r="${REL}"><workbookPr${opts.date1904 ? ' date1904="1"' : ''}/><sheets>${opts.sheets.map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`,
    },
    {
      name: 'xl/styles.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${NS}"><numFmts>${(opts.numFmts ?? []).map((f) => `<numFmt numFmtId="${f.id}" formatCode="${esc(f.code)}"/>`).join('')}</numFmts><cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs>${(opts.styles ?? [0]).map((id) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`).join('')}</cellXfs></styleSheet>`,
    },
  ]
  opts.sheets.forEach((s, i) => {
    files.push({
      name: `xl/worksheets/sheet${i + 1}.xml`,
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${NS}" xmlns:r="${REL}"><sheetData>${s.data}</sheetData></worksheet>`,
    })
  })
  if (opts.sharedStrings !== undefined)
    files.push({
      name: 'xl/sharedStrings.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${NS}">${opts.sharedStrings}</sst>`,
    })
  return files
}

/** A column's letters (0 → A, 26 → AA). */
export function columnName(i: number): string {
  let s = ''
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26))
    s = String.fromCharCode(65 + ((n - 1) % 26)) + s
  return s
}

const xmlText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;')

/**
 * A grid as an XLSX the way Excel saves one: texts in the shared strings, numbers as numbers,
 * a `Date` as a serial number with a date style (style 1, `dd-mm-yyyy hh:mm:ss`).
 */
export function gridXlsx(
  grid: Array<Array<string | number | Date | null>>,
): Uint8Array<ArrayBuffer> {
  const strings = new Map<string, number>()
  const rows: string[] = []
  grid.forEach((row, r) => {
    const cells: string[] = []
    row.forEach((v, c) => {
      if (v === null || v === '') return
      const ref = `${columnName(c)}${r + 1}`
      if (typeof v === 'number') cells.push(`<c r="${ref}"><v>${v}</v></c>`)
      else if (v instanceof Date)
        cells.push(`<c r="${ref}" s="1"><v>${v.getTime() / 86_400_000 + 25_569}</v></c>`)
      else {
        let i = strings.get(v)
        if (i === undefined) {
          i = strings.size
          strings.set(v, i)
        }
        cells.push(`<c r="${ref}" t="s"><v>${i}</v></c>`)
      }
    })
    rows.push(`<row r="${r + 1}">${cells.join('')}</row>`)
  })
  const sst = [...strings.keys()].map((s) => `<si><t xml:space="preserve">${xmlText(s)}</t></si>`)
  return zip(
    workbookParts({
      sheets: [{ name: 'Statement', data: rows.join('') }],
      sharedStrings: sst.join(''),
      numFmts: [{ id: 164, code: 'dd-mm-yyyy hh:mm:ss' }],
      styles: [0, 164],
    }),
  )
}
