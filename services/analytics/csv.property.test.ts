import { describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { exportPage, exportPageBytes } from './csv.ts'

/**
 * Characters each rule looks at (formula starts, their full-width forms, quoting, edge spaces,
 * the byte-order mark), signed decimals, multi-byte and lone surrogate text, beside plain ones.
 */
const awkward = [
  ...' =+-@\t\r\n",.e0123456789aZ\'',
  '\ufeff',
  '\uff1d',
  '\uff0b',
  '\uff0d',
  '\uff20',
  'é',
  '😀',
  '\ud800',
  '\udc00',
  '\u0000',
]
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(...awkward), maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  // Near a signed decimal: a phone number stays as typed, `-1.2.3` or `+1e5` is guarded.
  fc
    .tuple(
      fc.constantFrom('+', '-'),
      fc.string({ unit: fc.constantFrom(...'0123456789.e '), maxLength: 6 }),
    )
    .map(([sign, rest]) => sign + rest),
  fc.constantFrom('Party 12', '+254712345678', '-500.25', '2026-03-01T00:00:00.000Z', ''),
)
const number = fc.oneof(
  fc.integer({ min: -1e12, max: 1e12 }),
  fc.double(),
  fc.constantFrom(0.9, 1e21, 1e-7, -0, 0.1 + 0.2),
)
const cell = fc.oneof(
  { arbitrary: text, weight: 6 },
  { arbitrary: number, weight: 3 },
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.constant(new Uint8Array([1, 2])), weight: 1 },
)
const plain = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcXYZ019 ._:/'), minLength: 1, maxLength: 10 }),
  number,
  fc.constant(null),
)
/** Rows of plain cells with one drawn from anything (one odd cell sends its row the careful way). */
const oneOdd = fc
  .tuple(fc.array(plain, { minLength: 14, maxLength: 14 }), fc.nat(13), cell)
  .map(([row, at, odd]) => row.map((v, i) => (i === at ? odd : v)))
const row = fc.oneof(oneOdd, fc.array(cell, { minLength: 14, maxLength: 14 }))
const rows = fc.array(row, { maxLength: 20 })

describe('CSV page bytes', () => {
  it("are exportPage's text as UTF-8, byte for byte, whatever the cells", () => {
    const encoder = new TextEncoder()
    fc.assert(
      fc.property(rows, (page) => {
        const copy = () => page.map((r) => [...r])
        expect(exportPageBytes(copy())).toEqual(encoder.encode(exportPage(copy())))
      }),
      { numRuns: 2000 },
    )
  })

  it('grow past their first guess for long cells', () => {
    const long = 'x'.repeat(10_000)
    const page = [Array.from({ length: 14 }, (_, i) => (i % 2 ? long : `"${long}"`))]
    expect(new TextDecoder().decode(exportPageBytes(page.map((r) => [...r])))).toBe(
      exportPage(page),
    )
  })
})
