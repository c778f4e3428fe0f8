import { t } from 'elysia'
import { StatementProof } from './proof-answer.ts'

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
        '{occurred_at, amount, direction: "in"|"out", counterparty_name?, counterparty_phone?, description, receipt_number?, balance?, kind?, leg?}: kind one of the ledger kinds (derived from the description when absent); leg the part of its receipt (\'\' the movement, charge, loan, repay), derived from kind',
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
  skipped: t.Integer({
    description: 'rows that moved no money (failed, cancelled) and messages that are not money',
  }),
  errors: t.Array(RowError),
})

const StatementFacts = t.Object({
  read: t.Integer({
    description:
      "rows of the statement's table read; always accepted + duplicates + rejected + skipped",
  }),
  layout: t.String({
    description: 'the statement layout recognised (personal, app-2025, org-portal, table)',
  }),
  layout_name: t.String(),
  proof: StatementProof,
})

export const StatementResult = t.Composite([
  t.Object({ import_id: t.String() }),
  IngestResult,
  StatementFacts,
])

/** What a batch of rows or messages came to (POST /api/v1/parser/transactions, /sms). */
export type IngestAnswer = typeof IngestResult.static
/** What a statement import came to (POST /api/v1/statements), for the CLI too (public.ts). */
export type StatementAnswer = typeof StatementResult.static

/** One statement import as listed: its counts, layout and proof. */
export const StatementImport = t.Object({
  import_id: t.String(),
  file_name: t.Nullable(t.String()),
  created_at: t.String(),
  read: t.Nullable(t.Integer()),
  accepted: t.Integer(),
  duplicates: t.Integer(),
  rejected: t.Integer(),
  skipped: t.Integer(),
  layout: t.Nullable(t.String()),
  proof: t.Nullable(StatementProof),
})

export const StatementImports = t.Object({ data: t.Array(StatementImport) })
