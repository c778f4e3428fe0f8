import { t } from 'elysia'

const tenantId = t.Optional(
  t.String({
    description: 'tenant to act for (platform operator only; defaults to the token tenant)',
  }),
)

export const TransactionsBody = t.Object({
  tenant_id: tenantId,
  source: t.Optional(
    t.Union([t.Literal('api'), t.Literal('statement'), t.Literal('sms')], {
      description: "where the rows came from (default 'api'; `mmp import` sends 'statement')",
    }),
  ),
  demo: t.Optional(
    t.Boolean({
      description:
        'synthetic demo rows (`mmp demo seed`, platform operator only): not metered, not counted against the plan',
    }),
  ),
  transactions: t.Array(
    t.Record(t.String(), t.Unknown(), {
      description:
        '{occurred_at, amount, direction: "in"|"out", counterparty_name?, counterparty_phone?, description, receipt_number?, balance?}',
    }),
    { minItems: 1, maxItems: 5000 },
  ),
})

export const SmsBody = t.Object({
  tenant_id: tenantId,
  messages: t.Array(t.String({ maxLength: 2000 }), { minItems: 1, maxItems: 5000 }),
})

const RowError = t.Object({
  row: t.Optional(t.Integer({ description: 'record number in the file (statements)' })),
  index: t.Optional(t.Integer({ description: 'position in the request array' })),
  field: t.Optional(t.String()),
  message: t.String(),
})

export const IngestResult = t.Object({
  accepted: t.Integer(),
  duplicates: t.Integer({ description: 'rows whose receipt number the ledger already holds' }),
  matched: t.Integer({
    description:
      'of duplicates, rows whose receipt another channel (a payment, SMS, statement or API row) reported first: they enrich that transaction and add none',
  }),
  rejected: t.Integer(),
  skipped: t.Integer({ description: 'failed transactions that moved no money' }),
  errors: t.Array(RowError),
})

export const StatementResult = t.Composite([t.Object({ import_id: t.String() }), IngestResult])
