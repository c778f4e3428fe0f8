import { describe, expect, it } from 'bun:test'
import { parseAmountText } from '../kernel/money.ts'
import { counterpartyOf } from './parsed.ts'
import { readStatement } from './read-statement.ts'
import { cellCents, newChunk } from './statement-row.ts'

const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'

async function readCsv(text: string) {
  const all = newChunk()
  const read = await readStatement(new Blob([text]), {
    timeZone: 'Africa/Nairobi',
    onChunk: (c) => {
      all.transactions.push(...c.transactions)
      all.errors.push(...c.errors)
      all.skipped += c.skipped
    },
  })
  return { ...all, read }
}

describe('statement CSV', () => {
  it('joins a Details cell wrapped onto continuation rows to its transaction', async () => {
    const got = await readCsv(
      [
        HEADER,
        'SAB1CD2EF1,2024-01-02 08:15:22,Funds received from 254722111222 -,Completed,"1,500.00",,"11,500.00"',
        ',,PETER OTIENO,,,,',
        'SAB1CD2EF2,2024-01-02 09:01:05,Merchant Payment to 123456 - NAIVAS,Completed,,-500.00,"11,000.00"',
        ',,SUPERMARKET KAREN,,,,',
        ',,BRANCH,,,,',
        'SAB1CD2EF3,2024-01-03 10:30:00,Airtime Purchase,Completed,,-100.00,"10,900.00"',
      ].join('\n'),
    )
    expect(got.errors).toEqual([])
    expect(got.transactions).toMatchObject([
      {
        receiptNumber: 'SAB1CD2EF1',
        description: 'Funds received from 254722111222 - PETER OTIENO',
        counterpartyName: 'PETER OTIENO',
        counterpartyPhone: '254722111222',
        amount: 150000,
      },
      {
        description: 'Merchant Payment to 123456 - NAIVAS SUPERMARKET KAREN BRANCH',
        counterpartyName: 'NAIVAS SUPERMARKET KAREN BRANCH',
      },
      { receiptNumber: 'SAB1CD2EF3', description: 'Airtime Purchase', balance: 1090000 },
    ])
  })

  it('joins a continuation of the last row and of a failed row (still skipped)', async () => {
    const got = await readCsv(
      [
        HEADER,
        'SAB1CD2EF1,2024-01-02 08:15:22,Pay Bill to 247247 - EQUITY,Failed,,"-25,000.00","4,500.00"',
        ',,PAYBILL Acc. RENT,,,,',
        'SAB1CD2EF2,2024-01-02 09:01:05,Customer Transfer to 0711222333 -,Completed,,-500.00,"4,000.00"',
        ',,JOHN KAMAU,,,,',
      ].join('\n'),
    )
    expect(got.skipped).toBe(1)
    expect(got.transactions).toMatchObject([
      { receiptNumber: 'SAB1CD2EF2', counterpartyName: 'JOHN KAMAU' },
    ])
  })

  it('refuses a file of another layout, naming the header expected and the one found', async () => {
    const err = await readCsv('Date,Description,Amount\n2024-01-01,Sale,100\n').catch((e) => e)
    expect(err).toMatchObject({ code: 'VALIDATION_FAILED', status: 422 })
    expect(err.detail).toContain(`expected "${HEADER.replaceAll(',', ', ')}"`)
    expect(err.detail).toContain('found "Date, Description, Amount"')
  })
})

describe('reading a row fast', () => {
  it('reads an amount cell exactly as parseAmountText does, plain or not', () => {
    const cells = ['50,690.00', '-300.00', '7', '0.5', '-0.00', '1,2,3', '12345678901.99']
    cells.push(
      '1234567890123.45',
      '1.',
      '1.234',
      '.50',
      '-',
      ',100',
      'KES 1,000',
      ' 12',
      '1 2',
      'x',
    )
    for (const cell of cells) expect([cell, cellCents(cell)]).toEqual([cell, parseAmountText(cell)])
    expect(cellCents('')).toBeNull()
  })

  it('finds the phone in the last word of Details before the dash, whatever the blanks', () => {
    expect(counterpartyOf('Funds received from 0712345678 - JOHN DOE')).toEqual({
      name: 'JOHN DOE',
      phone: '254712345678',
    })
    expect(counterpartyOf('Funds received from\t0712345678 - JOHN DOE').phone).toBe('254712345678')
    expect(counterpartyOf('0712345678 - JOHN DOE').phone).toBe('254712345678')
  })
})
