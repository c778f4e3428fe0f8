import { t } from 'elysia'
import { KINDS } from '../../schema/vocabulary.ts'
import { listOf } from '../kernel/lists.ts'

const Direction = t.Union([t.Literal('in'), t.Literal('out')])
const Money = t.Number({ description: 'decimal, at most 2 places' })

/** Who and when: shared by every read. `tenant_id` is for the platform operator only. */
export const ScopeQuery = {
  tenant_id: t.Optional(t.String({ description: 'operator only: the tenant to read' })),
  from: t.Optional(
    t.String({ description: 'ISO 8601 date (a local day) or date-time, inclusive' }),
  ),
  to: t.Optional(
    t.String({ description: 'ISO 8601 date (whole local day) or date-time, inclusive' }),
  ),
  scope: t.Optional(
    t.Union([t.Literal('me'), t.Literal('tenant')], {
      description: "'me' narrows to the caller's own transactions",
    }),
  ),
}

const Kind = t.UnionEnum(KINDS, {
  description: 'what the entry is (DESIGN §16): customer_payment, charge, loan_drawn…',
})

export const FilterQuery = {
  ...ScopeQuery,
  direction: t.Optional(Direction),
  // A string checked by the list (as category is): Elysia gives an optional query UnionEnum its
  // first value as a default, which would filter every list to customer payments.
  kind: t.Optional(
    t.String({ maxLength: 40, description: `one of: ${KINDS.join(', ')} (DESIGN §16)` }),
  ),
  leg: t.Optional(
    t.String({
      maxLength: 40,
      description: "leg of its receipt: '' the movement itself, charge, loan, repay…",
    }),
  ),
  category: t.Optional(t.String({ maxLength: 100 })),
  min_amount: t.Optional(t.Numeric({ minimum: 0 })),
  max_amount: t.Optional(t.Numeric({ minimum: 0 })),
  phone: t.Optional(t.String({ maxLength: 32 })),
  q: t.Optional(t.String({ maxLength: 200, description: 'text in description, name or receipt' })),
}

export const Limit = t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1, default: 50 }))

const KindLine = t.Object({ count: t.Integer(), amount_in: Money, amount_out: Money })

export const SummaryResponse = t.Object({
  total_transactions: t.Integer(),
  total_amount: Money,
  average_transaction: Money,
  active_days: t.Integer(),
  total_in: Money,
  total_out: Money,
  revenue: t.Number({ description: 'customer payments: money earned (never a loan or savings)' }),
  expenses: t.Number({
    description: 'supplier and bill payments, charges, airtime: money spent (never a repayment)',
  }),
  net: t.Number({ description: 'revenue − expenses' }),
  balance_change: t.Number({
    description: 'total_in − total_out: what the balance moved, every kind included',
  }),
  by_kind: t.Record(t.String(), KindLine, {
    description: 'every kind, each its own line: loans, savings, own transfers, cash, charges…',
  }),
})

export const Transaction = t.Object(
  {
    id: t.String(),
    occurred_at: t.String(),
    amount: Money,
    direction: Direction,
    counterparty_name: t.Nullable(t.String()),
    counterparty_phone: t.Nullable(t.String()),
    description: t.String(),
    receipt_number: t.Nullable(t.String()),
    balance: t.Nullable(Money),
    category: t.Nullable(t.String()),
    category_confidence: t.Nullable(t.Number()),
    category_source: t.Nullable(t.String()),
    source: t.String(),
    user_id: t.Nullable(t.String()),
    kind: t.Nullable(Kind),
    leg: t.String({
      description: "'' the movement itself; charge, loan, repay… under its receipt",
    }),
  },
  { title: 'Transaction' },
)

export const TransactionPage = t.Object({
  data: t.Array(Transaction),
  next_cursor: t.Nullable(t.String()),
  has_more: t.Boolean(),
})

const Segment = t.String({
  description:
    'champions | loyal | potential_loyalists | new | need_attention | at_risk | hibernating',
})

export const CustomerList = listOf(
  t.Object({
    counterparty: t.String(),
    counterparty_name: t.Nullable(t.String()),
    counterparty_phone: t.Nullable(t.String()),
    count: t.Integer(),
    total: Money,
    total_in: Money,
    total_out: Money,
    first_seen: t.String(),
    last_seen: t.String(),
    segment: t.Nullable(Segment),
    rfm: t.Nullable(
      t.Object({ recency_days: t.Integer(), r: t.Integer(), f: t.Integer(), m: t.Integer() }),
    ),
  }),
)

export const InsightList = t.Composite([
  listOf(
    t.Object({
      type: t.String(),
      title: t.String(),
      message: t.String({ description: 'One sentence with formatted figures' }),
      numbers: t.Record(t.String(), t.Unknown()),
    }),
  ),
  t.Object({
    as_of: t.String({
      description: 'The day the periods end: today, or the last day with data when older',
    }),
  }),
])

export const TrendResponse = t.Object({
  interval: t.String(),
  data: t.Array(
    t.Object({
      period: t.String({ description: 'YYYY-MM-DD (day, Monday of the week) or YYYY-MM' }),
      start: t.String(),
      transactions: t.Integer(),
      total_in: Money,
      total_out: Money,
      revenue: Money,
      expenses: Money,
      net: t.Number({ description: 'revenue − expenses' }),
    }),
  ),
})

export const SegmentList = t.Object({
  as_of: t.String(),
  data: t.Array(
    t.Object({
      segment: Segment,
      customers: t.Integer(),
      share_of_customers: t.Number(),
      total: Money,
      share_of_value: t.Number(),
      average_value: Money,
      average_frequency: t.Number(),
      average_recency_days: t.Number(),
    }),
  ),
})

const ReconciliationItem = t.Object({
  receipt_number: t.String(),
  leg: t.String({ description: "the receipt's leg: '' the movement itself, charge, loan…" }),
  transaction_id: t.String({ description: 'the ledger transaction holding the receipt' }),
  source: t.String({ description: 'payment, sms, api or statement' }),
  channel: t.Nullable(t.String({ description: 'stk, b2c, c2b or reversal for payments' })),
  occurred_at: t.String(),
  amount: Money,
  direction: Direction,
  balance: t.Nullable(Money),
})
const ReconciliationList = <T extends ReturnType<typeof t.Object>>(item: T) =>
  t.Object({
    count: t.Integer({ description: 'exact; data lists at most 500' }),
    data: t.Array(item),
  })

export const ReconciliationResponse = t.Object({
  period: t.Nullable(
    t.Object(
      { from: t.String(), to: t.String() },
      { description: "the statement's first and last row within from/to; null: no statement" },
    ),
  ),
  statement_rows: t.Integer(),
  missing_from_statement: ReconciliationList(ReconciliationItem),
  not_reported_live: ReconciliationList(ReconciliationItem),
  amount_mismatches: ReconciliationList(
    t.Composite([
      ReconciliationItem,
      t.Object({
        reported: t.Array(ReconciliationItem, { description: 'the live reports that disagree' }),
      }),
    ]),
  ),
  balance: t.Nullable(
    t.Object({
      opening: Money,
      statement_closing: Money,
      platform_running: Money,
      difference: Money,
    }),
  ),
})

/** The OpenAPI detail of a route that takes a bearer token. */
export const secured = (summary: string) => ({
  summary,
  tags: ['analytics'],
  security: [{ bearer: [] }],
})
