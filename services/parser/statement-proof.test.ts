import { heapStats } from 'bun:jsc'
import { describe, expect, it } from 'bun:test'
import { StatementProof } from './statement-proof.ts'

/** Rows as a statement prints them, newest first: [time, in, out, balance]. */
function prove(rows: Array<[string, number, number, number]>) {
  const p = new StatementProof()
  rows.forEach(([time, inC, outC, bal], i) => {
    p.note(i + 1, time, Date.parse(time), inC, outC, bal, true)
  })
  return p.verdict()
}

describe('the running balance of a statement', () => {
  it('chains rows of one second in whatever order they are printed (a Fuliza group)', () => {
    const v = prove([
      ['2022-03-15T04:08:05Z', 0, 1300, 0],
      ['2022-03-15T04:08:05Z', 0, 100_000, 1300],
      ['2022-03-15T04:08:05Z', 29_328, 0, 101_300],
      ['2022-03-14T10:00:00Z', 71_972, 0, 71_972],
    ])
    expect(v).toMatchObject({ balanceChains: true, breakCount: 0, opening: 0, closing: 0 })
  })

  it('finds a charge deleted from a same-second group at the next row, with its amount', () => {
    const v = prove([
      ['2022-03-16T09:00:00Z', 200_000, 0, 200_000],
      ['2022-03-15T04:08:05Z', 0, 100_000, 1300],
      ['2022-03-15T04:08:05Z', 29_328, 0, 101_300],
      ['2022-03-14T10:00:00Z', 71_972, 0, 71_972],
    ])
    expect(v.balanceChains).toBe(false)
    expect(v.breaks[0]).toMatchObject({
      between: ['2022-03-15T04:08:05Z', '2022-03-16T09:00:00Z'],
      missing: -1300,
    })
  })

  it('does not take a group whose rows do not chain among themselves for a whole one', () => {
    // The group's net would land on a printed balance, but no order of its rows chains.
    const v = prove([
      ['2022-03-15T04:08:05Z', 0, 500, 9_000],
      ['2022-03-15T04:08:05Z', 0, 500, 9_000],
      ['2022-03-14T10:00:00Z', 10_000, 0, 10_000],
    ])
    expect(v.balanceChains).toBe(false)
  })

  it('says how much is missing between which rows', () => {
    const v = prove([
      ['2024-03-09T11:06:03Z', 600_000, 0, 3_985_960],
      ['2024-03-09T01:17:03Z', 412_550, 0, 2_785_960],
    ])
    expect(v.breaks).toEqual([
      {
        rows: [2, 1],
        between: ['2024-03-09T01:17:03Z', '2024-03-09T11:06:03Z'],
        expected: 3_385_960,
        found: 3_985_960,
        missing: 600_000,
      },
    ])
  })
})

describe('the proof of a statement read in pieces', () => {
  it('keeps no piece of the file alive through the times it keeps for every row', () => {
    // Each row's time cut out of a 1 MiB piece, as a spreadsheet's unpacked XML hands them over.
    const external = () => {
      Bun.gc(true)
      return heapStats().extraMemorySize
    }
    const before = external()
    const proof = new StatementProof()
    for (let p = 0; p < 32; p++) {
      const piece = `<row r="${p}">${' '.repeat(2 ** 20)}2024-01-05 14:22:${String(p).padStart(2, '0')}`
      const time = piece.slice(-19)
      proof.note(p + 1, time, Date.parse(`${time}Z`), 100, 0, 100 * (p + 1), true)
    }
    const grown = external() - before
    expect(proof.verdict().balanceChains).toBe(true)
    expect(grown).toBeLessThan(4 * 2 ** 20)
  })
})
