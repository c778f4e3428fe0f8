import { t } from 'elysia'
import { bodyLimitOf } from '../../schema/routes.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { isDemoBatch } from './demo.ts'
import { importStatement } from './import-statement.ts'
import { listImports } from './imports.ts'
import { ingestSms, ingestTransactions } from './ingest.ts'
import {
  IngestResult,
  SmsBody,
  StatementImports,
  StatementResult,
  TransactionsBody,
} from './model.ts'
import { spoolUpload } from './upload.ts'

/** A statement streams to disk under its route's limit (schema/routes.ts, the upload class). */
const STATEMENT_LIMIT = bodyLimitOf('parser', 'POST', '/api/v1/statements')

const secured = { security: [{ bearer: [] }], tags: ['parser'] }

/** The parser service's HTTP controller: transactions in through JSON, SMS or statement CSV. */
export function createParserApp(ctx: ServiceContext) {
  return createServiceApp(ctx, {
    title: 'Parser',
    description: 'Transactions in: JSON batches, M-Pesa SMS and M-Pesa statements',
  })
    .post(
      '/api/v1/parser/transactions',
      ({ body, actor }) =>
        ingestTransactions(ctx, {
          tenantId: tenantFor(actor, body.tenant_id),
          userId: actor.userId,
          rows: body.transactions,
          source: body.source ?? 'api',
          demo: isDemoBatch(actor, body.demo),
        }),
      {
        auth: 'manage',
        idempotent: true,
        body: TransactionsBody,
        response: { 200: IngestResult },
        detail: {
          summary: 'Add a batch of transactions (duplicates by receipt number are skipped)',
          ...secured,
        },
      },
    )
    .post(
      '/api/v1/parser/sms',
      ({ body, actor }) =>
        ingestSms(ctx, {
          tenantId: tenantFor(actor, body.tenant_id),
          userId: actor.userId,
          messages: body.messages,
        }),
      {
        auth: 'manage',
        idempotent: true,
        body: SmsBody,
        response: { 200: IngestResult },
        detail: { summary: 'Add transactions from M-Pesa confirmation messages', ...secured },
      },
    )
    .get(
      '/api/v1/statements',
      ({ query, actor }) => ({
        data: listImports(ctx, tenantFor(actor, query.tenant_id), query.limit ?? 20),
      }),
      {
        auth: 'read',
        query: t.Object({
          tenant_id: t.Optional(t.String()),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
        }),
        response: { 200: StatementImports },
        detail: {
          summary:
            'Statements imported, newest first: rows read and kept, the layout, and whether each adds up (its proof and finding)',
          ...secured,
        },
      },
    )
    .post(
      '/api/v1/statements',
      async ({ request, query, actor, set }) => {
        const upload = await spoolUpload(ctx, request, STATEMENT_LIMIT)
        try {
          const result = await importStatement(ctx, {
            tenantId: tenantFor(actor, upload.fields.tenant_id || query.tenant_id),
            userId: actor.userId,
            file: Bun.file(upload.path),
            fileName: upload.fileName,
            password: upload.fields.password,
            signal: request.signal,
          })
          set.status = 201
          return result
        } finally {
          upload.discard()
        }
      },
      {
        auth: 'manage',
        idempotent: true,
        // Read as a stream (see upload.ts), not buffered by the framework.
        parse: 'none',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 201: StatementResult },
        detail: {
          summary:
            'Import an M-Pesa full statement (CSV or the emailed PDF, multipart field `file`)',
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  properties: {
                    file: {
                      type: 'string',
                      format: 'binary',
                      description: 'M-Pesa statement: CSV, or the PDF Safaricom emails',
                    },
                    password: {
                      type: 'string',
                      description: "the PDF's password (usually the owner's ID number)",
                    },
                    tenant_id: {
                      type: 'string',
                      description: 'tenant to act for (platform operator only)',
                    },
                  },
                },
              },
            },
          },
          ...secured,
        },
      },
    )
}
