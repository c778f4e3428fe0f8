/**
 * The platform's fixed words (SPEC §2 and §6 enumerations), declared once and shared by the
 * services and the dashboard. Pure constants: safe to import into the browser bundle.
 */

/** The seven categorization categories of SPEC §2, exactly. */
export const CATEGORIES = [
  'Revenue',
  'Inventory',
  'Rent',
  'Salaries',
  'Transport',
  'Utilities',
  'Other',
] as const
export type Category = (typeof CATEGORIES)[number]

/** User roles of SPEC §2, most powerful first. */
export const ROLES = ['Admin', 'Manager', 'Analyst', 'Viewer'] as const
export type Role = (typeof ROLES)[number]

/**
 * The webhook events' names, for the dashboard: each is declared in schema/webhook-events.ts (which
 * the browser must not load), and the compiler holds the two lists to the same names.
 */
export const WEBHOOK_EVENTS = [
  'payment.success',
  'payment.failed',
  'transaction.categorized',
  'subscription.renewed',
  'statement.processed',
  'low.balance.alert',
] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

/** The reserved tenant whose Admin is the platform operator. */
export const PLATFORM_TENANT = 'platform'

/**
 * What a ledger entry is, beside its SPEC category (DESIGN §16 "Kinds"). Derived from the row or
 * message that reported it: a statement row's Details / Reason Type, an SMS's wording, a payment's
 * channel. Revenue, expenses, customers, health, burn and runway count only the kinds their words
 * mean (`KIND_ROLE`); the balance counts every kind.
 */
export const KINDS = [
  'customer_payment',
  'supplier_payment',
  'charge',
  'loan_drawn',
  'loan_repaid',
  'savings_in',
  'savings_out',
  'own_transfer',
  'cash_deposit',
  'cash_withdrawal',
  'airtime',
  'reversal',
  'settlement',
] as const
export type Kind = (typeof KINDS)[number]

/**
 * What a kind counts as: `revenue` money earned, `expense` money spent, `balance` money that only
 * moves between the owner's own pockets or a lender (loans, savings, own transfers, cash in and
 * out at an agent, settlement to the bank) or undoes another entry (reversal).
 */
export const KIND_ROLE: Record<Kind, 'revenue' | 'expense' | 'balance'> = {
  customer_payment: 'revenue',
  supplier_payment: 'expense',
  charge: 'expense',
  loan_drawn: 'balance',
  loan_repaid: 'balance',
  savings_in: 'balance',
  savings_out: 'balance',
  own_transfer: 'balance',
  cash_deposit: 'balance',
  cash_withdrawal: 'balance',
  airtime: 'expense',
  reversal: 'balance',
  settlement: 'balance',
}

/** Kinds in the owner's words, for the dashboard and exports. */
export const KIND_LABELS: Record<Kind, string> = {
  customer_payment: 'Customer payment',
  supplier_payment: 'Supplier or bill payment',
  charge: 'Transaction charge',
  loan_drawn: 'Loan drawn (Fuliza, overdraft)',
  loan_repaid: 'Loan repaid',
  savings_in: 'From savings',
  savings_out: 'To savings',
  own_transfer: 'Own transfer',
  cash_deposit: 'Cash deposit',
  cash_withdrawal: 'Cash withdrawal',
  airtime: 'Airtime and bundles',
  reversal: 'Reversal',
  settlement: 'Settlement to bank',
}
