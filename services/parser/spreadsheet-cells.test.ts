import { describe, expect, it } from 'bun:test'
import * as XLSX from '@e965/xlsx'
import { isDateFormat, isDateFormatId, serialDate, xlsxString } from './spreadsheet-cells.ts'

describe('spreadsheet cells as statement text', () => {
  it('tells a date format from a number format as SheetJS does', () => {
    const table = XLSX.SSF.get_table() as Record<number, string>
    const custom = [
      'dd-mm-yyyy hh:mm:ss',
      '[$-409]d/m/yyyy\\ h:mm;@',
      'yyyy-mm-dd',
      '[h]:mm:ss',
      '#,##0.00;[Red]-#,##0.00',
      '"KES "#,##0.00',
      '0.00E+00',
      '#,##0.00_);(#,##0.00)',
      '@',
      'General',
      '"Date: "@',
      '[<=9999999]###-####;(###) ###-####',
      '[Green]0.00',
      'AM/PM h',
      '0%',
      '# ?/?',
    ]
    for (const code of [...Object.values(table), ...custom])
      expect([code, isDateFormat(code)]).toEqual([code, XLSX.SSF.is_date(code)])
  })

  it('knows the built-in date formats by id', () => {
    expect([14, 22, 45, 47].every(isDateFormatId)).toBe(true)
    expect([0, 2, 4, 10, 49].some(isDateFormatId)).toBe(false)
  })

  it('writes serial dates as wall-clock text, in either date system', () => {
    expect(serialDate(45352.50001)).toBe('2024-03-01 12:00:01')
    expect(serialDate(43525.5, true)).toBe('2023-03-02 12:00:00')
  })

  it('decodes entities, _xHHHH_ escapes and CRLF in strings', () => {
    expect(xlsxString('A &amp; B_x000D__x000A_C\r\nD')).toBe('A & B\nC\nD')
    expect(xlsxString('plain text')).toBe('plain text')
  })
})
