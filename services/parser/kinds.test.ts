import { describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { byRules, kindOf } from './kinds.ts'

/** Words of the rules and of ordinary Details, for texts that come close to every rule. */
const WORDS = [
  ...'reversal reversed revers charge charges transaction cost overdraft overdraw of credit party od loan repayment fuliza draw repay m-shwari mshwari lock savings saving ziidi kcb m-pesa mpesa tala branch international zenka okash hustler fund funds settlement sweep withdraw withdrawal to bank transfer utility account working pochi la biashara own between accounts customer at agent atm deposit cash airtime bundle bundles data purchase recharge for topup'.split(
    ' ',
  ),
  ...'pay bill from john doe 254712345678 acc. 12345 merchant payment received funds - till down town'.split(
    ' ',
  ),
]

const word = fc
  .tuple(fc.constantFrom(...WORDS), fc.boolean())
  .map(([w, upper]) => (upper ? w.toUpperCase() : w))
const text = fc
  .array(
    fc.tuple(fc.oneof(word, fc.string({ maxLength: 4 })), fc.constantFrom(' ', '', '-', '.', '  ')),
    {
      maxLength: 8,
    },
  )
  .map((parts) =>
    parts
      .map(([w, sep]) => w + sep)
      .join('')
      .trim(),
  )

describe('kinds of statement rows', () => {
  it('gives what the rules alone give: no rule matches a text without one of its words', () => {
    fc.assert(
      fc.property(text, fc.constantFrom('in' as const, 'out' as const), (t, dir) => {
        expect(kindOf(t, dir)).toBe(byRules(t, dir))
      }),
      { numRuns: 20_000 },
    )
  })

  it('reads the wordings of real statements', () => {
    const cases: Array<[string, 'in' | 'out', string]> = [
      ['Funds received from 254712345678 - JOHN DOE Pay Bill Online', 'in', 'customer_payment'],
      ['Pay Bill Charge', 'out', 'charge'],
      ['OverDraft of Credit Party', 'in', 'loan_drawn'],
      ['OD Loan Repayment to 232323 - M-PESA Overdraw', 'out', 'loan_repaid'],
      ['M-Shwari Deposit', 'out', 'savings_out'],
      ['Utility Account to Organization Settlement Account', 'out', 'settlement'],
      ['Reversal of transaction RBK1AAAAA1', 'in', 'reversal'],
      ['Customer Withdrawal At Agent Till 123456 - SHOP', 'out', 'cash_withdrawal'],
      ['Buy Bundles', 'out', 'airtime'],
      ['Merchant Payment to 123456 - SHELL KAREN', 'out', 'supplier_payment'],
    ]
    for (const [t, dir, kind] of cases) expect(`${t}: ${kindOf(t, dir)}`).toBe(`${t}: ${kind}`)
  })
})
