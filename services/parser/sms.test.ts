import { describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { parseSms, type SmsKind } from './sms.ts'

/**
 * Every message below is ANONYMISED: receipts, names, phones, agents, amounts and balances are
 * made up; the wording, spacing and punctuation are those of real messages found in public
 * repositories, named beside each case:
 * - ngenohkevin/ledga app/src/test/java/com/ledga/app/parser/MpesaSmsParserTest.kt (real
 *   regressions: reversal with credited amount, Fuliza repayment, KCB M-PESA, Hustler Fund,
 *   balance enquiry, Fuliza "Interest charged")
 * - a Kotlin app whose package is com.transsion.financialassistant, TransactionTypeTests.kt and
 *   models/TransactionType.kt (index did not name the repository): personal received, sent, pay
 *   bill, buy goods, airtime, withdraw, deposit, M-Shwari to/from, Pochi received/sent/moves
 * - a Next.js SMS webhook's backfill list (repository not named by the index; 2026 messages of one
 *   phone): Fuliza draw sharing its payment's receipt, Fuliza full repayment, KCB M-PESA both
 *   ways, airtime for another number ("New  balance")
 * - till-owner confirmations quoted in a CLAUDE.md brief and a Python parser test (repositories
 *   not named): "Confirmed.on … PMKsh20.00 received from 2547… NAME. New Account balance is"
 * - several parsers' tests for "sent to SAFARICOM DATA BUNDLES for account SAFARICOM DATA BUNDLES"
 * - MbogoAlex/CashLedger-backend-Java- (services): KCB M-PESA, Lock Savings, M-Shwari loan keys
 * - com.fintrack MpesaParser.kt (repository not named): "Congratulations!" prefix, reversal
 *   "is debited from your M-PESA account"
 * - pluspeople/pesaPi php/documentation/mpesa_private_examples.txt: failure notices
 * - a Dart parser's notes (repository not named): "Your M-Shwari loan has been approved on … and
 *   Ksh… less excise duty has been deposited to your M-PESA account"
 */
const zone = 'Africa/Nairobi'
const now = '2025-12-01T00:00:00.000Z'
const read = (text: string) => parseSms(text, zone, now)

type Case = {
  wording: SmsKind
  text: string
  expect: Record<string, unknown>
  charge?: number
}

const cases: Record<string, Case> = {
  'personal money received': {
    wording: 'received',
    text: 'TD41KQ7ZNA Confirmed.You have received Ksh2,350.00 from PETER  ODHIAMBO 0711000222 on 16/3/25 at 4:55 PM  New M-PESA balance is Ksh2,419.13. Dial *544*18# & Enjoy 18 min talktime,',
    expect: {
      amount: 235000,
      direction: 'in',
      kind: 'customer_payment',
      counterpartyName: 'PETER ODHIAMBO',
      counterpartyPhone: '254711000222',
      occurredAt: '2025-03-16T13:55:00.000Z',
      balance: 241913,
      receiptNumber: 'TD41KQ7ZNA',
    },
  },
  'money received from a bank': {
    wording: 'received',
    text: 'TD18ABC9MW Confirmed.You have received Ksh12,800.00 from KCB 1 501901 on 1/4/25 at 3:52 PM New M-PESA balance is Ksh12,883.13.  Separate personal and business funds through Pochi la Biashara on *334#.',
    expect: {
      amount: 1280000,
      kind: 'customer_payment',
      counterpartyName: 'KCB 1 501901',
      counterpartyPhone: null,
      occurredAt: '2025-04-01T12:52:00.000Z',
      balance: 1288313,
    },
  },
  'money sent': {
    wording: 'sent',
    text: 'TCH2LMN8QR Confirmed. Ksh450.00 sent to ALICE  WAMBUI 0722333444 on 17/3/25 at 1:36 PM. New M-PESA balance is Ksh1,004.13. Transaction cost, Ksh7.00.  Amount you can transact within the day is 499,550.00. Dial *544*18# & Enjoy 18 min talktime, 180MB & an M-PESA send money transaction all @20 bob.',
    expect: {
      amount: 45000,
      direction: 'out',
      kind: 'supplier_payment',
      counterpartyName: 'ALICE WAMBUI',
      counterpartyPhone: '254722333444',
      occurredAt: '2025-03-17T10:36:00.000Z',
      balance: 100413,
    },
    charge: 700,
  },
  'pay bill': {
    wording: 'paybill',
    text: 'TCM3RS6TUV Confirmed. Ksh1,200.00 sent to Lipa na KCB for account 9000111 on 22/3/25 at 6:22 PM New M-PESA balance is Ksh843.13. Transaction cost, Ksh5.00.Amount you can transact within the day is 498,800.00. Save frequent paybills for quick payment on M-PESA app https://bit.ly/mpesalnk',
    expect: {
      amount: 120000,
      direction: 'out',
      kind: 'supplier_payment',
      counterpartyName: 'Lipa na KCB',
      description: 'Pay Bill to Lipa na KCB Acc. 9000111',
      occurredAt: '2025-03-22T15:22:00.000Z',
      balance: 84313,
    },
    charge: 500,
  },
  'buy goods': {
    wording: 'buy_goods',
    text: 'TCG4WX9YZA Confirmed. Ksh1,045.00 paid to MAMA MBOGA SUPERMARKET. on 16/3/25 at 7:51 PM.New M-PESA balance is Ksh1,324.13. Transaction cost, Ksh0.00. Amount you can transact within the day is 497,455.00. Save frequent Tills for quick payment on M-PESA app https://bit.ly/mpesalnk',
    expect: {
      amount: 104500,
      direction: 'out',
      kind: 'supplier_payment',
      counterpartyName: 'MAMA MBOGA SUPERMARKET',
      occurredAt: '2025-03-16T16:51:00.000Z',
      balance: 132413,
    },
  },
  'cash withdrawal at an agent': {
    wording: 'withdraw',
    text: 'SL5BC1DE94 Confirmed.on 1/12/24 at 6:44 PMWithdraw Ksh2,100.00 from 600111 - Baraka shop 7th street Eastleigh New M-PESA balance is Ksh258.61. Transaction cost, Ksh29.00. Amount you can transact within the day is 496,850.00. To move money from bank to M-PESA, dial *334#>Withdraw>From Bank to MPESA',
    expect: {
      amount: 210000,
      direction: 'out',
      kind: 'cash_withdrawal',
      counterpartyName: 'Baraka shop 7th street Eastleigh',
      description: 'Withdrawal at agent Baraka shop 7th street Eastleigh',
      occurredAt: '2024-12-01T15:44:00.000Z',
      balance: 25861,
    },
    charge: 2900,
  },
  'cash deposit at an agent': {
    wording: 'deposit',
    text: 'TA7FG8HJ3W Confirmed. On 6/1/25 at 4:22 PM Give Ksh1,500.00 cash to UMOJA COMM Jirani EnterprisesKASARANI 12 New M-PESA balance is Ksh1,835.89. You can now access M-PESA via *334#',
    expect: {
      amount: 150000,
      direction: 'in',
      kind: 'cash_deposit',
      counterpartyName: 'UMOJA COMM Jirani EnterprisesKASARANI 12',
      description: 'Deposit of funds at agent UMOJA COMM Jirani EnterprisesKASARANI 12',
      occurredAt: '2025-01-06T13:22:00.000Z',
      balance: 183589,
    },
  },
  'airtime for oneself': {
    wording: 'airtime',
    text: 'TBC6KLMNPR confirmed.You bought Ksh50.00 of airtime on 12/2/25 at 4:57 PM.New M-PESA balance is Ksh1,685.97. Transaction cost, Ksh0.00. Amount you can transact within the day is 499,660.00. Buy airtime from 1 bob via M-PESA today & keep that conversation going!',
    expect: {
      amount: 5000,
      direction: 'out',
      kind: 'airtime',
      counterpartyName: 'Safaricom',
      description: 'Airtime purchase',
      occurredAt: '2025-02-12T13:57:00.000Z',
      balance: 168597,
    },
  },
  'airtime for another number': {
    wording: 'airtime',
    text: 'UEV3ST620X confirmed.You bought Ksh30.00 of airtime for 254700111222 on 31/5/25 at 9:36 PM.New  balance is Ksh228.32. Transaction cost, Ksh0.00. Amount you can transact within the day is 487,605.00.You can now access M-PESA via *334#',
    expect: {
      amount: 3000,
      kind: 'airtime',
      description: 'Airtime purchase for 254700111222',
      occurredAt: '2025-05-31T18:36:00.000Z',
      balance: 22832,
    },
  },
  'data bundles': {
    wording: 'bundles',
    text: 'TJ6CF7OZYR Confirmed.     Ksh55.00 sent to SAFARICOM DATA BUNDLES for account SAFARICOM DATA BUNDLES on 6/10/25 at 5:14 PM. New M-PESA balance is Ksh61.73.       Transaction cost, Ksh0.00.',
    expect: {
      amount: 5500,
      direction: 'out',
      kind: 'airtime',
      counterpartyName: 'SAFARICOM DATA BUNDLES',
      occurredAt: '2025-10-06T14:14:00.000Z',
      balance: 6173,
    },
  },
  'till owner: a customer pays the till': {
    wording: 'received',
    text: 'TJR2KL8MNP Confirmed.on 27/10/25 at 2:27 PMKsh150.00 received from 254711222333 SAMUEL KIPROTICH MUTUA. New Account balance is Ksh72,426.00. Transaction cost, Ksh0.00.',
    expect: {
      amount: 15000,
      direction: 'in',
      kind: 'customer_payment',
      counterpartyName: 'SAMUEL KIPROTICH MUTUA',
      counterpartyPhone: '254711222333',
      occurredAt: '2025-10-27T11:27:00.000Z',
      balance: 7242600,
    },
  },
  'till owner: the merchant pays a transaction cost': {
    wording: 'received',
    text: 'TFT4PQ7RS5 Confirmed.on 29/6/25 at 6:36 PMKsh400.00 received from 254722444555 GRACE Wanjiru NJERI. New Account balance is Ksh4,773.94. Transaction cost, Ksh2.20.',
    expect: {
      amount: 40000,
      kind: 'customer_payment',
      counterpartyName: 'GRACE Wanjiru NJERI',
      counterpartyPhone: '254722444555',
      occurredAt: '2025-06-29T15:36:00.000Z',
      balance: 477394,
    },
    charge: 220,
  },
  'till owner: masked phone, line breaks, capital KSH': {
    wording: 'received',
    text: 'UJ5H08Q4M3 Confirmed.\non 2/10/25 at 7:37 PM\nKsh40.00 received from\n2547****001 Jane Akinyi.\nNew Account balance is KSH1,090.05.',
    expect: {
      amount: 4000,
      kind: 'customer_payment',
      counterpartyName: 'Jane Akinyi',
      counterpartyPhone: null,
      occurredAt: '2025-10-02T16:37:00.000Z',
      balance: 109005,
    },
  },
  'Pochi la Biashara owner: money received': {
    wording: 'received',
    text: 'TCH7QWE2RT Confirmed.You have received Ksh85.00 from DORCAS  ATIENO on 17/3/25 at 12:03 PM  New business balance is Ksh185.00. To access your funds, Dial *334#,select Pochi la Biashara & Withdraw funds.',
    expect: {
      amount: 8500,
      direction: 'in',
      kind: 'customer_payment',
      counterpartyName: 'DORCAS ATIENO',
      occurredAt: '2025-03-17T09:03:00.000Z',
      balance: 18500,
    },
  },
  'Pochi la Biashara owner: money sent from the business account': {
    wording: 'sent',
    text: 'TCJ8ZXC3VB Confirmed. Ksh60.00 sent to KEVIN  OTIENO on 18/3/25 at 9:10 AM. New business balance is Ksh125.00. Transaction cost, Ksh0.00. Amount you can transact within the day is 499,940.00.',
    expect: {
      amount: 6000,
      direction: 'out',
      kind: 'supplier_payment',
      counterpartyName: 'KEVIN OTIENO',
      occurredAt: '2025-03-18T06:10:00.000Z',
      balance: 12500,
    },
  },
  'Pochi la Biashara: moved into the business account': {
    wording: 'business_transfer',
    text: 'TD29ASD4FG Confirmed, Ksh300.00 has been moved from your M-PESA account to your business account on 2/4/25 at 10:15 AM. New business balance is Ksh485.00. New M-PESA balance is Ksh700.00. Transaction cost, Ksh0.00.',
    expect: {
      amount: 30000,
      direction: 'in',
      kind: 'own_transfer',
      occurredAt: '2025-04-02T07:15:00.000Z',
      balance: 48500,
    },
  },
  'Pochi la Biashara: moved out of the business account': {
    wording: 'business_transfer',
    text: 'TD2AHJ5KLQ Confirmed, Ksh200.00 has been moved from your business account to your M-PESA account on 3/4/25 at 6:40 PM.. New business balance is Ksh285.00. New M-PESA balance is Ksh900.00. Transaction cost, Ksh0.00.',
    expect: { amount: 20000, direction: 'out', kind: 'own_transfer', balance: 28500 },
  },
  'Fuliza draw sharing its payment receipt': {
    wording: 'fuliza',
    text: 'UEV9FL606G Confirmed. Fuliza M-PESA amount is Ksh 212.50. Access Fee charged Ksh 2.13. Total Fuliza M-PESA outstanding amount is Ksh240.86 due on 30/06/25. To check daily charges, Dial *334#OK Select Query Charges',
    expect: {
      amount: 21250,
      direction: 'in',
      kind: 'loan_drawn',
      counterpartyName: 'Fuliza M-PESA',
      occurredAt: now,
      balance: null,
    },
    charge: 213,
  },
  'Fuliza draw, older "Interest charged" wording': {
    wording: 'fuliza',
    text: 'TGM5XBTX2H Confirmed. Fuliza M-PESA amount is Ksh 840.00. Interest charged Ksh 8.40. Total Fuliza M-PESA outstanding amount is Ksh 1210.40 due on 21/08/25. To check daily charges, Dial *334#OK Select Fuliza M-PESA.',
    expect: { amount: 84000, kind: 'loan_drawn', balance: null },
    charge: 840,
  },
  'Fuliza partly repaid': {
    wording: 'fuliza_repayment',
    text: 'UC3QR8BHFR  Confirmed. Ksh 350.00 from your M-PESA has been used to partially pay your outstanding Fuliza M-PESA. Your available Fuliza M-PESA limit is Ksh 6018.37. M-PESA balance is Ksh0.00.',
    expect: {
      amount: 35000,
      direction: 'out',
      kind: 'loan_repaid',
      counterpartyName: 'Fuliza M-PESA',
      occurredAt: now,
      balance: 0,
    },
  },
  'Fuliza fully repaid, balance without Ksh': {
    wording: 'fuliza_repayment',
    text: 'UEVLB61NCL Confirmed. Ksh 931.68 from your M-PESA has been used to fully pay your outstanding Fuliza M-PESA. Available Fuliza M-PESA limit is Ksh 1500.00. Your M-PESA balance is 1068.32.',
    expect: { amount: 93168, direction: 'out', kind: 'loan_repaid', balance: 106832 },
  },
  'to M-Shwari': {
    wording: 'to_savings',
    text: 'TC57HJRGAT Confirmed.Ksh8,000.00 transferred to M-Shwari account on 5/3/25 at 11:53 AM. M-PESA balance is Ksh4,066.05 .New M-Shwari saving account balance is Ksh9,033.79. Transaction cost Ksh.0.00',
    expect: {
      amount: 800000,
      direction: 'out',
      kind: 'savings_out',
      counterpartyName: 'M-Shwari',
      occurredAt: '2025-03-05T08:53:00.000Z',
      balance: 406605,
    },
  },
  'from M-Shwari': {
    wording: 'from_savings',
    text: 'TCP3MNYZH8 Confirmed.Ksh250.00 transferred from M-Shwari account on 25/3/25 at 4:41 PM. M-Shwari balance is Ksh40.29 .M-PESA balance is Ksh309.61 .Transaction cost Ksh.0.00',
    expect: {
      amount: 25000,
      direction: 'in',
      kind: 'savings_in',
      counterpartyName: 'M-Shwari',
      occurredAt: '2025-03-25T13:41:00.000Z',
      balance: 30961,
    },
  },
  'to KCB M-PESA': {
    wording: 'to_savings',
    text: 'UEVQA5ZL0C Confirmed. Ksh6,000.00 transfered to KCB M-PESA account on 31/5/25 at 12:33 PM. New M-PESA balance is Ksh355.54, new KCB M-PESA Saving account balance is Ksh6,400.00.',
    expect: {
      amount: 600000,
      direction: 'out',
      kind: 'savings_out',
      counterpartyName: 'KCB M-PESA',
      occurredAt: '2025-05-31T09:33:00.000Z',
      balance: 35554,
    },
  },
  'from KCB M-PESA': {
    wording: 'from_savings',
    text: 'UF3QE6OMZP Confirmed. You have transfered Ksh1,500.00 from your KCB M-PESA account on 3/6/25 at 4:27 PM. KCB M-PESA Account balance is Ksh0.17. New M-PESA balance is Ksh1,720.00.',
    expect: {
      amount: 150000,
      direction: 'in',
      kind: 'savings_in',
      counterpartyName: 'KCB M-PESA',
      occurredAt: '2025-06-03T13:27:00.000Z',
      balance: 172000,
    },
  },
  'M-Shwari loan': {
    wording: 'mshwari_loan',
    text: 'UJ3QW8KRG4 Confirmed. Your M-Shwari loan has been approved on 3/10/25 12:42 AM and Ksh2,500.00 less excise duty has been deposited to your M-PESA account. New M-PESA balance is Ksh2,610.00. Did you know you can top up your M-Shwari loan once within the first 20 days?',
    expect: {
      amount: 250000,
      direction: 'in',
      kind: 'loan_drawn',
      counterpartyName: 'M-Shwari',
      occurredAt: '2025-10-02T21:42:00.000Z',
      balance: 261000,
    },
  },
  'Hustler Fund repayment': {
    wording: 'sent',
    text: 'SEK9V08F14 Confirmed. You have sent Ksh502.84 to Hustler Fund on 20/05/2024  at 03:23 PM. New MPESA balance is Ksh3,429.84.',
    expect: {
      amount: 50284,
      direction: 'out',
      kind: 'loan_repaid',
      counterpartyName: 'Hustler Fund',
      occurredAt: '2024-05-20T12:23:00.000Z',
      balance: 342984,
    },
  },
  'reversal credited back': {
    wording: 'reversal',
    text: 'SH4ATPJZKZ confirmed. Reversal of transaction SH4BSP5YUQ has been successfully reversed  on 3/8/24  at 2:30 PM and Ksh350.00 is credited to your M-PESA account. New M-PESA account balance is Ksh1,920.00.',
    expect: {
      amount: 35000,
      direction: 'in',
      kind: 'reversal',
      reversalOf: 'SH4BSP5YUQ',
      occurredAt: '2024-08-03T11:30:00.000Z',
      balance: 192000,
    },
  },
  'reversal debited (money received in error taken back)': {
    wording: 'reversal',
    text: 'SH5CTPJZKA confirmed. Reversal of transaction SH5DSP5YUB has been successfully reversed  on 4/8/24  at 9:05 AM and Ksh750.00 is debited from your M-PESA account. New M-PESA account balance is Ksh120.00.',
    expect: {
      amount: 75000,
      direction: 'out',
      kind: 'reversal',
      reversalOf: 'SH5DSP5YUB',
      occurredAt: '2024-08-04T06:05:00.000Z',
      balance: 12000,
    },
  },
  'bare reversal notice': {
    wording: 'reversal',
    text: 'RK4EX2K9LT Confirmed. Transaction RK4EX2K9LN has been reversed. Your account balance is now Ksh1,771.00.',
    expect: {
      amount: null,
      kind: 'reversal',
      reversalOf: 'RK4EX2K9LN',
      occurredAt: now,
      balance: 177100,
    },
  },
  'a 2013 message: nine-character receipt, bank sender, "PIN YAKO SIRI YAKO" tail': {
    wording: 'received',
    text: 'DT85QR896 Confirmed.\nYou have received Ksh2,700.00 from\n501901 - KCB Money Transfer Services \non 31/7/13 at 6:43 PM\nNew M-PESA balance is Ksh9,312.00.PIN YAKO SIRI YAKO',
    expect: {
      amount: 270000,
      kind: 'customer_payment',
      counterpartyName: '501901 - KCB Money Transfer Services',
      occurredAt: '2013-07-31T15:43:00.000Z',
      balance: 931200,
      receiptNumber: 'DT85QR896',
    },
  },
  '"Congratulations!" prefix and "Ksh 241.19"': {
    wording: 'received',
    text: 'Congratulations! TGE7WZSMPY confirmed. You have received Ksh 241.19 from JOYCE  NAFULA 0733444555 on 14/7/25 at 11:50 AM. New M-PESA balance is Ksh300.00.',
    expect: {
      amount: 24119,
      kind: 'customer_payment',
      counterpartyName: 'JOYCE NAFULA',
      counterpartyPhone: '254733444555',
      occurredAt: '2025-07-14T08:50:00.000Z',
      balance: 30000,
      receiptNumber: 'TGE7WZSMPY',
    },
  },
}

describe('parseSms reads every kind of real confirmation', () => {
  for (const [name, c] of Object.entries(cases)) {
    it(`reads ${name}`, () => {
      const r = read(c.text)
      if (!r.ok) throw new Error(`refused: ${r.message}`)
      expect(r.kind).toBe(c.wording)
      expect(r.transaction).toMatchObject(c.expect)
      expect(r.charge).toBe(c.charge as number)
    })
  }

  it('reads a reversal that names no receipt by the amount credited (constructed wording)', () => {
    const r = read(
      'AB1C234567 Confirmed. Your last transaction has been reversed and Ksh120.00 is credited to your M-PESA account. New M-PESA balance is Ksh220.00.',
    )
    expect(r).toMatchObject({
      ok: true,
      transaction: { amount: 12000, direction: 'in', kind: 'reversal', balance: 22000 },
    })
    if (r.ok) expect(r.transaction.reversalOf).toBeUndefined()
    expect(read('AB1C234568 Confirmed. Your last transaction has been reversed.')).toMatchObject({
      ok: false,
      skipped: false,
      message: 'the reversal names neither the reversed receipt nor the amount',
    })
  })

  it('reads all three till-owner messages that used to be refused', () => {
    const tills = Object.entries(cases).filter(([name]) => name.startsWith('till owner'))
    expect(tills).toHaveLength(3)
    for (const [, c] of tills) expect(read(c.text)).toMatchObject({ ok: true, kind: 'received' })
  })
})

describe('parseSms skips notices that move no money', () => {
  const notices: Record<string, [string, RegExp]> = {
    'a balance enquiry': [
      'UCJ4F9UGN5 Confirmed. Your account balance was: M-PESA Account : Ksh658.00 Business Account : Ksh0.00 on 19/3/25 at 1:33 PM. Transaction cost, Ksh0.00.',
      /balance enquiry/,
    ],
    'a Fuliza limit notice': [
      'Your Fuliza M-PESA limit is Ksh 2,500.00. Dial *234*0# to check your limit.',
      /Fuliza limit/,
    ],
    'a Fuliza opt-out': [
      'You have successfully opted out of Fuliza M-PESA service.',
      /opt-in or opt-out/,
    ],
    'a Fuliza outstanding-amount reminder': [
      'MN12345678 Confirmed. Total Fuliza M-PESA outstanding amount is Ksh508.16 due on 30/6/25.',
      /outstanding-amount/,
    ],
    'an M-Shwari loan limit': ['Your M-Shwari loan limit is Ksh 3,000.00.', /loan limit/],
    'a failed transaction': [
      'Failed. The withdrawal from your KCB M-PESA Account cannot be completed at this time. Please contact M-PESA Customer Care.',
      /failed/,
    ],
    'a one-time code': [
      'Your M-PESA verification code is 482913. Do not share this code with anyone.',
      /one-time code/,
    ],
    'a promotion': [
      'Separate personal and business funds through Pochi la Biashara on *334#.',
      /without a receipt/,
    ],
  }
  for (const [name, [text, reason]] of Object.entries(notices)) {
    it(`skips ${name}, saying why`, () => {
      const r = read(text)
      expect(r).toMatchObject({ ok: false, skipped: true })
      if (!r.ok) expect(r.message).toMatch(reason)
    })
  }
})

describe('parseSms reads what a cut-short message has and names what is missing', () => {
  it('keeps a message cut inside the name, with the time it was handed in', () => {
    const r = read('QGH7X2K9LN Confirmed. Ksh500.00 sent to MARY WANJ')
    expect(r).toMatchObject({
      ok: true,
      transaction: { amount: 50000, counterpartyName: 'MARY WANJ', occurredAt: now, balance: null },
    })
  })

  it('keeps a message cut after the date, without a balance', () => {
    const r = read(
      'QGH7X2K9LP Confirmed. Ksh2,000.00 sent to KPLC PREPAID for account 54321678 on 6/1/25 at 9:00 AM New M-PE',
    )
    expect(r).toMatchObject({
      ok: true,
      kind: 'paybill',
      transaction: { amount: 200000, occurredAt: '2025-01-06T06:00:00.000Z', balance: null },
    })
  })

  const refusals: Record<string, [string, RegExp]> = {
    'no amount': ['QGH7X2K9LN Confirmed. You have rec', /amount is missing/],
    'an amount cut in two': ['QGH7X2K9LN Confirmed. Ksh5,0', /ends inside its amount/],
    'a Fuliza amount cut in two': [
      'UEV9FL606G Confirmed. Fuliza M-PESA amount is Ksh 21',
      /amount may be cut short/,
    ],
    'no receipt number': [
      'Confirmed. Ksh500.00 sent to JOHN KAMAU 0712345678 on 1/2/25 at 1:00 PM',
      /receipt number is missing/,
    ],
    'a new wording': [
      'QGH7X2K9LZ Confirmed. Ksh500.00 teleported to the moon.',
      /not a recognised M-Pesa confirmation/,
    ],
    'a text that is not M-Pesa at all': ['Hello, your parcel is ready', /no receipt number/],
  }
  for (const [name, [text, reason]] of Object.entries(refusals)) {
    it(`refuses a message with ${name}, saying so`, () => {
      const r = read(text)
      expect(r).toMatchObject({ ok: false, skipped: false })
      if (!r.ok) expect(r.message).toMatch(reason)
    })
  }
})

describe('parseSms odd spacing and the sanity window', () => {
  it('reads "Ksh.0.00", "confirmed.on", "PMWithdraw" and a glued "Confirmed.You"', () => {
    const r = read(
      'qw2e3r4t5y confirmed.on 9/9/25 at 12:00 PMWithdraw Ksh.1,000.00 from 123456 - DUKA LA JAMII New M-PESA balance is Ksh.175.00. Transaction cost, Ksh.29.00.',
    )
    expect(r).toMatchObject({
      ok: true,
      kind: 'withdraw',
      charge: 2900,
      transaction: {
        receiptNumber: 'QW2E3R4T5Y',
        amount: 100000,
        occurredAt: '2025-09-09T09:00:00.000Z',
        balance: 17500,
        counterpartyName: 'DUKA LA JAMII',
      },
    })
  })

  it('reads "KES" and a four-digit year', () => {
    const r = read(
      'OP22334466 Confirmed. KES 800.00 sent to BOB OTIENO 0712223334 on 16/3/2025 at 3:45 PM. New M-PESA balance is KES 4,200.00.',
    )
    expect(r).toMatchObject({
      ok: true,
      transaction: { amount: 80000, balance: 420000, occurredAt: '2025-03-16T12:45:00.000Z' },
    })
  })

  const dates: Record<string, [string, RegExp]> = {
    'before M-Pesa began': ['5/1/06 at 10:15 AM', /before M-Pesa began/],
    'more than a day ahead': ['3/12/25 at 10:15 AM', /more than a day in the future/],
    'that does not exist': ['31/2/25 at 10:15 AM', /not a real date/],
  }
  for (const [name, [when, reason]] of Object.entries(dates)) {
    it(`refuses a date ${name}`, () => {
      const r = read(
        `QGH7X2K9LM Confirmed.You have received Ksh1,500.00 from JOHN KAMAU 0712345678 on ${when} New M-PESA balance is Ksh12,345.00.`,
      )
      expect(r).toMatchObject({ ok: false, skipped: false })
      if (!r.ok) expect(r.message).toMatch(reason)
    })
  }

  it('accepts a date within a day after now (a phone clock a little ahead)', () => {
    const r = read(
      'QGH7X2K9LM Confirmed.You have received Ksh1,500.00 from JOHN KAMAU 0712345678 on 1/12/25 at 10:15 AM New M-PESA balance is Ksh12,345.00.',
    )
    expect(r).toMatchObject({ ok: true, transaction: { occurredAt: '2025-12-01T07:15:00.000Z' } })
  })
})

describe('parseSms on arbitrary text', () => {
  const pieces = [
    'QGH7X2K9LM',
    ' Confirmed.',
    'confirmed.on ',
    'Ksh',
    'Ksh.',
    ' 1,500.00',
    '0.00',
    ' sent to ',
    ' received from ',
    ' paid to ',
    ' for account ',
    ' on 5/1/24 at 10:15 AM',
    'PM',
    ' New M-PESA balance is ',
    ' Transaction cost, ',
    'Fuliza M-PESA amount is ',
    ' from your M-PESA has been used to fully pay',
    ' transferred to M-Shwari account',
    ' Reversal of transaction ',
    ' has been reversed',
    ' is debited',
    ' JOHN 0712345678',
    '2547***456',
    '.',
    ' ',
  ]

  it('never throws, and what it accepts is well formed', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 400 }),
          fc.array(fc.constantFrom(...pieces)).map((a) => a.join('')),
        ),
        (text) => {
          const r = parseSms(text, zone, now)
          if (!r.ok) return typeof r.message === 'string' && r.message.length > 0
          const t = r.transaction
          return (
            (t.amount === null || (Number.isInteger(t.amount) && t.amount > 0)) &&
            !Number.isNaN(Date.parse(t.occurredAt)) &&
            t.occurredAt >= '2007' &&
            (r.charge === undefined || (Number.isInteger(r.charge) && r.charge > 0))
          )
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('refuses a text far longer than any M-Pesa message without reading it', () => {
    expect(read(`QGH7X2K9LM Confirmed. ${'x'.repeat(5000)}`)).toMatchObject({
      ok: false,
      skipped: false,
    })
  })
})
