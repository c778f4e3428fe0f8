import { decodeXml } from './xml-scan.ts'

/**
 * A spreadsheet cell as the text the statement reader reads, the same whichever reader found it
 * (the XLSX stream reader or SheetJS for XLS and HTML): a date stored as a serial number with a
 * date format is written back as `YYYY-MM-DD HH:MM:SS` wall-clock text, a number as a plain
 * decimal (two places unless whole), a boolean as `true`/`false`, text trimmed.
 */
const pad = (n: number) => String(n).padStart(2, '0')
/** Day 0 of a spreadsheet's dates (1899-12-30, which absorbs Lotus's 1900 leap-day bug). */
const EXCEL_EPOCH = Date.UTC(1899, 11, 30)
/** Day 0 of a workbook saved with the 1904 date system (old Mac Excel). */
const EPOCH_1904 = Date.UTC(1904, 0, 1)
const DAY_S = 86_400

/** A wall-clock time held in a Date's UTC fields, as statement text. */
export const wallClock = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`

/** A serial date number (days since the epoch, the fraction the time of day) as statement text. */
export const serialDate = (serial: number, date1904 = false) =>
  wallClock(new Date((date1904 ? EPOCH_1904 : EXCEL_EPOCH) + Math.round(serial * DAY_S) * 1000))

/** A number cell's text: whole numbers as they are, others to two places (amounts). */
export const numberText = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2))

/**
 * Built-in number formats that are dates or times: 14–22 and 45–47 everywhere, 27–36 and
 * 50–58 in East Asian locales (ECMA-376 part 1, 18.8.30).
 */
export function isDateFormatId(id: number): boolean {
  return (
    (id >= 14 && id <= 22) ||
    (id >= 27 && id <= 36) ||
    (id >= 45 && id <= 47) ||
    (id >= 50 && id <= 58)
  )
}

/**
 * Whether a number format code shows a date or time: it has a date or time token (y m d h s,
 * AM/PM, an elapsed [h] [m] [s], a B1/B2 calendar) outside quoted text, escapes, colours and
 * conditions. The same rule as SheetJS's `SSF.is_date`, so the XLSX reader agrees with it.
 */
export function isDateFormat(code: string): boolean {
  let i = 0
  while (i < code.length) {
    const c = code.charAt(i)
    switch (c) {
      case 'G':
        i += code.slice(i, i + 7).toLowerCase() === 'general' ? 7 : 1
        break
      case '"':
        i = code.indexOf('"', i + 1)
        i = i < 0 ? code.length : i + 1
        break
      case '\\':
      case '_':
        i += 2
        break
      case '*':
        i += code.charAt(i + 1) === ' ' || code.charAt(i + 1) === '*' ? 2 : 1
        break
      case 'A':
      case 'a':
      case '上':
        if (/^(a\/p|am\/pm|上午\/下午)/i.test(code.slice(i, i + 5))) return true
        i++
        break
      case '[': {
        const end = code.indexOf(']', i)
        const inside = end < 0 ? code.slice(i) : code.slice(i, end + 1)
        if (/^\[[HhMmSs\u0E0A\u0E19\u0E17]*\]$/.test(inside)) return true
        i = end < 0 ? code.length : end + 1
        break
      }
      case '.':
      case '0':
      case '#':
        i = numberEnd(code, i)
        break
      case '?':
        while (code.charAt(++i) === '?') {}
        break
      default:
        if ('BMDYHSEbmdyhseg'.includes(c)) return true
        if (c >= '1' && c <= '9') while (i < code.length && /[0-9]/.test(code.charAt(++i))) {}
        else i++
    }
  }
  return false
}

/** Past a run of digit placeholders, where an `E` is an exponent, not an era. */
function numberEnd(code: string, i: number): number {
  for (;;) {
    const c = code.charAt(++i)
    if (i >= code.length) return i
    if ('0#?.,E+-%'.includes(c)) continue
    if (c === '\\' && code.charAt(i + 1) === '-' && '0#'.includes(code.charAt(i + 2))) continue
    return i
  }
}

/** Characters that call for more than a trim: an entity, an `_xHHHH_` escape, a CR. */
const SPECIAL = /[&_\r]/

/** Text of an XLSX string: XML entities and the `_xHHHH_` escapes decoded, CRLF as LF. */
export function xlsxString(raw: string): string {
  if (!SPECIAL.test(raw)) return raw
  const decoded = decodeXml(raw)
  const s = decoded.includes('_x')
    ? decoded.replace(/_x([\da-fA-F]{4})_/g, (_, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      )
    : decoded
  return s.includes('\r\n') ? s.replaceAll('\r\n', '\n') : s
}
