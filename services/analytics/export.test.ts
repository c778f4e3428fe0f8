import { describe, expect, it } from 'bun:test'
import Papa from 'papaparse'
import { unparsePage } from './export.ts'

describe('CSV pages', () => {
  it('writes exactly what Papa.unparse writes, quoting included', () => {
    const rows = [
      ['txn_1', '2026-01-01T00:00:00.000Z', 12.5, 'in', 'Ann, Ltd', null, 'say "hi"', 'R1', null],
      ['txn_2', '2026-01-01T00:00:00.000Z', 0.01, 'out', ' lead', 'tail ', 'line\nbreak', '', 3],
      ['txn_3', '2026-01-01T00:00:00.000Z', 100, 'in', '=SUM(A1)', '+2547', 'plain', 'R3', 0.9],
      ['txn_4', '2026-01-01T00:00:00.000Z', 7, 'in', 'cr\r', '\ufeffbom', 'ok', undefined, true],
    ]
    expect(unparsePage(rows)).toBe(`${Papa.unparse(rows, { header: false })}\r\n`)
  })
})
