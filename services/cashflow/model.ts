import { t } from 'elysia'

const Money = t.Number({ description: 'decimal amount in the tenant currency' })
const NullableMoney = t.Nullable(Money)
const Day = t.String({ description: 'calendar day YYYY-MM-DD in the tenant time zone' })

export const TenantQuery = t.Optional(
  t.String({ description: 'tenant to read (platform operator only; default: the token tenant)' }),
)

export const SummaryQuery = t.Object({
  days: t.Optional(
    t.Numeric({
      minimum: 1,
      maximum: 3660,
      multipleOf: 1,
      description: 'window length, default 30',
    }),
  ),
  as_of: t.Optional(
    t.String({
      description: 'last day of the window (default: today, or the last day with data if older)',
    }),
  ),
  from: t.Optional(t.String({ description: 'first day of the window (instead of days)' })),
  to: t.Optional(t.String({ description: 'same as as_of' })),
})

export const Reason = t.Object({ code: t.String(), message: t.String(), impact: t.Number() })

const KindFlow = t.Object({
  label: t.String({ description: "the kind in the owner's words" }),
  inflow: Money,
  outflow: Money,
  net: Money,
  count: t.Integer(),
})

/** A line of money that is neither earned nor spent: it moves the balance, not health or burn. */
export const FlowLine = t.Object({
  inflow: Money,
  outflow: Money,
  net: Money,
  kinds: t.Record(t.String(), KindFlow, {
    description: 'per kind (schema vocabulary KINDS) that occurred in the window',
  }),
})

export const DataQuality = t.Object(
  {
    verdict: t.Union([t.Literal('proven'), t.Literal('does_not_add_up'), t.Literal('unchecked')]),
    finding: t.Nullable(t.String({ description: 'where the statement does not add up' })),
    import_id: t.String(),
    file_name: t.Nullable(t.String()),
    processed_at: t.String(),
  },
  { description: 'the latest statement import: whether its rows reproduce its totals and balance' },
)

export const SummaryResponse = t.Object({
  tenant_id: t.String(),
  from: Day,
  to: Day,
  as_of: t.String({
    description: 'the day the figures are as of: the last day with data when older than today',
  }),
  days: t.Integer(),
  inflow: t.Number({ description: 'money earned: revenue kinds (customer payments)' }),
  outflow: t.Number({
    description: 'money spent: expense kinds (suppliers, bills, charges, airtime)',
  }),
  net: t.Number({ description: 'operating net: inflow - outflow' }),
  financing: t.Object(FlowLine.properties, {
    description: 'loans drawn and repaid (Fuliza, overdraft): move the balance, not health or burn',
  }),
  transfers: t.Object(FlowLine.properties, {
    description: 'savings, own transfers, cash at an agent, settlement to the bank, reversals',
  }),
  total: t.Object(
    { inflow: Money, outflow: Money, net: Money },
    { description: 'every movement, operating and not: what the balance follows' },
  ),
  loan_reliance: t.Nullable(
    t.Number({ description: 'loans drawn / operating inflow; null when nothing was drawn' }),
  ),
  balance: NullableMoney,
  balance_at: t.Nullable(t.String()),
  burn_rate: t.Number({ description: 'average daily operating deficit over the last 30 days' }),
  burn_rate_90: t.Number({ description: 'average daily operating deficit over the last 90 days' }),
  runway_days: t.Nullable(t.Number({ description: 'balance / burn_rate; null when not burning' })),
  liquidity_ratio: t.Nullable(
    t.Number({ description: 'operating inflow / outflow over the window' }),
  ),
  low_balance_threshold: NullableMoney,
  health_score: t.Integer({ minimum: 0, maximum: 100 }),
  health_status: t.Union(
    [
      t.Literal('healthy'),
      t.Literal('watch'),
      t.Literal('at_risk'),
      t.Literal('unproven'),
      t.Literal('no_data'),
    ],
    {
      description:
        "'healthy' only with a score of 80+ and no deficit, no reliance on loans and a latest statement that adds up; 'unproven' when it does not add up",
    },
  ),
  reasons: t.Array(Reason),
  data_quality: t.Nullable(DataQuality),
})

export const DailyQuery = t.Object({
  from: t.Optional(t.String()),
  to: t.Optional(t.String()),
  tenant_id: TenantQuery,
})

export const DailyResponse = t.Object({
  tenant_id: t.String(),
  from: Day,
  to: Day,
  data: t.Array(
    t.Object({
      date: Day,
      inflow: Money,
      outflow: Money,
      net: Money,
      categories: t.Record(t.String(), t.Object({ inflow: Money, outflow: Money, net: Money })),
      balance_moves: t.Record(t.String(), t.Object({ inflow: Money, outflow: Money, net: Money }), {
        description: 'movements that are neither earned nor spent, by kind (loans, savings…)',
      }),
    }),
  ),
})

export const AnalyzeBody = t.Object({
  from: t.Optional(t.String()),
  to: t.Optional(t.String()),
  tenant_id: TenantQuery,
  options: t.Optional(
    t.Object({
      significance: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 0.5 })),
      drivers_limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
      recurring: t.Optional(t.Boolean()),
      recurring_limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
    }),
  ),
})

export const RecurringPayment = t.Object({
  counterparty: t.String(),
  category: t.String(),
  direction: t.Union([t.Literal('in'), t.Literal('out')]),
  frequency: t.Union([t.Literal('weekly'), t.Literal('biweekly'), t.Literal('monthly')]),
  interval_days: t.Number(),
  typical_amount: Money,
  amount_variation: t.Number({ description: 'coefficient of variation of the amounts' }),
  occurrences: t.Integer(),
  first_date: Day,
  last_date: Day,
  next_expected_date: Day,
  monthly_amount: Money,
  confidence: t.Number({ minimum: 0, maximum: 1 }),
})

export const ForecastQuery = t.Object({
  horizon: t.Optional(t.Numeric({ minimum: 1, maximum: 365, multipleOf: 1 })),
  tenant_id: TenantQuery,
})

export const ForecastResponse = t.Object({
  tenant_id: t.String(),
  horizon: t.Integer(),
  model: t.String({ description: "'holt_winters_additive_damped' or 'insufficient_history'" }),
  params: t.Nullable(
    t.Object({
      alpha: t.Number(),
      beta: t.Number(),
      gamma: t.Number(),
      phi: t.Number(),
      season_length: t.Integer(),
    }),
  ),
  history: t.Object({ from: t.Nullable(Day), to: t.Nullable(Day), days: t.Integer() }),
  scheduled: t.Array(RecurringPayment, {
    description: 'monthly scheduled payments projected on their due days',
  }),
  points: t.Array(
    t.Object({
      date: Day,
      net: Money,
      lower_80: Money,
      upper_80: Money,
      lower_95: Money,
      upper_95: Money,
      balance: NullableMoney,
    }),
  ),
  backtest: t.Nullable(
    t.Object({
      mase: t.Nullable(t.Number()),
      mape: t.Nullable(t.Number()),
      mae: t.Number(),
      rmse: t.Number(),
      holdout_days: t.Integer(),
      from: Day,
      to: Day,
    }),
  ),
  baseline: t.Nullable(
    t.Object({
      model: t.Literal('seasonal_naive'),
      mase: t.Nullable(t.Number()),
      mape: t.Nullable(t.Number()),
      mae: t.Number(),
      rmse: t.Number(),
    }),
  ),
})

export const SettingsBody = t.Object({
  low_balance_threshold: t.Nullable(t.Number({ minimum: 0 })),
  tenant_id: TenantQuery,
})

export const SettingsResponse = t.Object({
  tenant_id: t.String(),
  low_balance_threshold: NullableMoney,
})

const Period = t.Object({ start: Day, end: Day, inflow: Money, outflow: Money, net: Money })
const NullableNumber = t.Nullable(t.Number())

const Trend = t.Object({
  period: t.Union([t.Literal('day'), t.Literal('week'), t.Literal('month')]),
  slope: t.Number({ description: 'change of net per period (currency per period)' }),
  intercept: t.Number(),
  slope_std_error: NullableNumber,
  t_stat: NullableNumber,
  p_value: NullableNumber,
  r_squared: NullableNumber,
  n: t.Integer(),
  significant: t.Boolean(),
  direction: t.Union([t.Literal('up'), t.Literal('down'), t.Literal('flat')]),
  inflow_slope: t.Number(),
  outflow_slope: t.Number(),
  periods: t.Array(Period),
})

const SeasonalIndex = t.Object({
  group: t.Integer(),
  effect: NullableNumber,
  inflow_index: NullableNumber,
  outflow_index: NullableNumber,
  days: t.Integer(),
})

const Seasonality = t.Object({
  indices: t.Array(SeasonalIndex),
  f_stat: NullableNumber,
  p_value: NullableNumber,
  significant: t.Boolean(),
  strength: NullableNumber,
})

const Driver = t.Object({
  category: t.String(),
  amount: Money,
  share: t.Number(),
  previous_amount: Money,
  change: Money,
})

export const AnalyzeResponse = t.Object({
  tenant_id: t.String(),
  from: Day,
  to: Day,
  days: t.Integer(),
  totals: t.Object(
    { inflow: Money, outflow: Money, net: Money },
    { description: 'operating flows: money earned and spent' },
  ),
  financing: FlowLine,
  transfers: FlowLine,
  trend: t.Object({ daily: Trend, weekly: Trend, monthly: Trend }),
  seasonality: t.Object({
    day_of_week: t.Object({
      ...Seasonality.properties,
      indices: t.Array(t.Object({ day: t.String(), ...SeasonalIndex.properties })),
    }),
    day_of_month: Seasonality,
  }),
  drivers: t.Object({ inflow: t.Array(Driver), outflow: t.Array(Driver) }),
  recurring: t.Array(RecurringPayment),
})
