import type { Kind } from '../../schema/vocabulary.ts'

/**
 * What a statement row is, from the words M-Pesa itself prints: the Details text of a personal
 * statement ("OD Loan Repayment to 232323 - M-PESA Overdraw", "Pay Bill Charge") and, on an
 * org-portal statement, its Reason Type ("Pay Utility with OD via STK", "Organization Settlement").
 * The first rule that matches wins, so the narrow ones (charges, loans, savings) come before the
 * broad ones (pay bill, transfer). The wordings are those of real statements (docs/statement-layouts.md).
 */
type Direction = 'in' | 'out'
const RULES: Array<{ re: RegExp; kind: Kind | ((dir: Direction, text: string) => Kind) }> = [
  { re: /\breversal\b|\breversed\b/i, kind: 'reversal' },
  // "Pay Bill Charge", "Customer Transfer of Funds Charge", "Withdrawal Charge", "Pay Merchant
  // Charge", "Business Charge": the fee M-Pesa takes, a leg of its payment's receipt.
  { re: /\bcharges?\s*$|\bcharge\b(?!.*\bto\b)|\btransaction cost\b/i, kind: 'charge' },
  // Fuliza: the overdraft drawn to complete a payment, and its repayment.
  {
    re: /overdraft of credit party|\bod loan\b(?!.*repay)|fuliza.*(draw|credit)/i,
    kind: 'loan_drawn',
  },
  {
    re: /\bod loan repayment\b|overdra(?:w|ft).*repay|fuliza.*repay|\bloan repayment\b/i,
    kind: 'loan_repaid',
  },
  {
    re: /\b(m-?shwari|lock savings|ziidi|kcb m-?pesa|savings?)\b/i,
    // A savings product's loan ("M-Shwari Loan", "KCB M-PESA Loan Repayment") is a loan.
    kind: (dir, text) => {
      if (/\bloan\b/i.test(text)) return dir === 'in' ? 'loan_drawn' : 'loan_repaid'
      return dir === 'in' ? 'savings_in' : 'savings_out'
    },
  },
  {
    re: /\b(loan|tala|branch international|zenka|okash|hustler fund)\b/i,
    kind: (dir) => (dir === 'in' ? 'loan_drawn' : 'loan_repaid'),
  },
  {
    re: /\b(settlement|sweep|withdraw(?:al)? (?:of )?funds? to bank|funds transfer to bank|transfer to bank)\b/i,
    kind: 'settlement',
  },
  {
    re: /\b(utility account|working account|pochi la biashara to|to own|own account|between accounts)\b/i,
    kind: 'own_transfer',
  },
  {
    re: /\b(customer withdrawal|withdrawal at agent|agent withdrawal|atm withdrawal)\b/i,
    kind: 'cash_withdrawal',
  },
  {
    re: /\b(deposit of funds|agent deposit|deposit at agent|cash deposit)\b/i,
    kind: 'cash_deposit',
  },
  {
    re: /\b(airtime|bundle|bundles|data purchase|recharge for customer|topup)\b/i,
    kind: 'airtime',
  },
]

/**
 * A word every rule's pattern needs, in plain alternation: most rows of a statement are plain
 * payments that match no rule, and this tells so in under half the time the rules' own patterns
 * together take (no word boundaries or look-aheads to try at every letter). A text that has one
 * of these words still goes through the rules; kinds.test.ts checks no rule can match without.
 */
const RULE_WORDS =
  /revers|charge|transaction cost|overdra|od loan|fuliza|loan|shwari|saving|ziidi|kcb|tala|branch international|zenka|okash|hustler fund|settlement|sweep|withdraw|transfer to bank|utility account|working account|pochi la biashara to|to own|own account|between accounts|deposit|airtime|bundle|data purchase|recharge for customer|topup/i

/** The kind of a statement row: its words first, then the direction (money in is a customer's). */
export function kindOf(text: string, direction: Direction): Kind {
  if (!RULE_WORDS.test(text)) return direction === 'in' ? 'customer_payment' : 'supplier_payment'
  return byRules(text, direction)
}

/** `kindOf` without the look for a rule's word first. */
export function byRules(text: string, direction: Direction): Kind {
  for (const rule of RULES) {
    if (rule.re.test(text))
      return typeof rule.kind === 'function' ? rule.kind(direction, text) : rule.kind
  }
  return direction === 'in' ? 'customer_payment' : 'supplier_payment'
}

/**
 * Which leg of its receipt a row of this kind is (DESIGN §16 "Legs"): the rows that share a
 * receipt with the payment they belong to are its charge, the overdraft drawn for it and the
 * repayment. Every other kind is the movement itself ('').
 */
export function legOf(kind: Kind): string {
  switch (kind) {
    case 'charge':
      return 'charge'
    case 'loan_drawn':
      return 'loan'
    case 'loan_repaid':
      return 'repay'
    default:
      return ''
  }
}
