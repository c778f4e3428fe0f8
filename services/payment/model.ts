import { t } from 'elysia'
import { PaymentStatus as Status, StkPushAccepted } from '../../schema/peers.ts'

export { StkPushAccepted }

/**
 * A Kenyan mobile number as people type it (kernel/phone.ts `normalizePhone`): `07…`/`01…`,
 * `+254…`/`254…`, spaces, dashes, dots and brackets anywhere.
 */
const SEP = '[\\s\\-().]*'
export const PHONE_PATTERN = `^${SEP}(?:(?:\\+${SEP})?2${SEP}5${SEP}4|0)${SEP}[17](?:${SEP}\\d){8}${SEP}$`

const Phone = (who: string) =>
  t.String({
    pattern: PHONE_PATTERN,
    description: `${who} phone: 07…, 01…, +2547…, 2547… (normalised to 2547XXXXXXXX)`,
    examples: ['0712 345 678'],
  })

/** Daraja's amount: whole shillings from 1 to 250,000 (M-Pesa takes no cents). */
const Shillings = (what: string) =>
  t.Integer({ minimum: 1, maximum: 250_000, description: what, examples: [150] })

export const StkPushBody = t.Object({
  tenant_id: t.Optional(t.String({ description: "the token's tenant (operator: any)" })),
  phone_number: Phone('customer'),
  amount: Shillings('whole shillings, 1 to 250,000 (STK push takes no cents)'),
  account_reference: t.String({
    minLength: 1,
    maxLength: 12,
    description: "caller-chosen reference (Daraja's AccountReference), at most 12 characters",
    examples: ['ORDER-1'],
  }),
  transaction_desc: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 13,
      description:
        "description (Daraja's TransactionDesc, optional there too), at most 13 characters; default 'Payment'",
      examples: ['Sugar 2kg'],
    }),
  ),
})

export const PaymentStatusView = t.Object(
  {
    checkout_request_id: t.String(),
    merchant_request_id: t.Nullable(t.String()),
    status: Status,
    result_code: t.Nullable(t.Integer()),
    result_desc: t.Nullable(t.String({ description: "the provider's own words" })),
    result_message: t.Nullable(
      t.String({
        description: 'what happened, in plain words for the shop owner (null while pending)',
      }),
    ),
    mpesa_receipt_number: t.Nullable(t.String()),
    amount: t.Number(),
    phone_number: t.String(),
    account_reference: t.String(),
    transaction_desc: t.String(),
    transaction_id: t.Nullable(
      t.String({ description: 'the transaction id of the success event' }),
    ),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'Payment' },
)

export const PaymentList = t.Object({
  data: t.Array(t.Composite([t.Object({ id: t.String() }), PaymentStatusView])),
  next_cursor: t.Nullable(t.String()),
  has_more: t.Boolean(),
})

export const ListQuery = t.Object({
  tenant_id: t.Optional(t.String()),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
  cursor: t.Optional(t.String()),
  status: t.Optional(Status),
})

export const B2CBody = t.Object({
  tenant_id: t.Optional(t.String()),
  phone_number: Phone('recipient'),
  amount: Shillings('whole shillings, 1 to 250,000'),
  remarks: t.String({ minLength: 2, maxLength: 100, description: '2 to 100 characters' }),
  occasion: t.Optional(t.String({ maxLength: 100, description: 'at most 100 characters' })),
})

export const B2CAccepted = t.Object({
  id: t.String(),
  originator_conversation_id: t.String(),
  conversation_id: t.String(),
  status: Status,
})

export const DisbursementView = t.Object(
  {
    id: t.String(),
    originator_conversation_id: t.String(),
    conversation_id: t.Nullable(t.String()),
    status: Status,
    result_code: t.Nullable(t.Integer()),
    result_desc: t.Nullable(t.String()),
    transaction_receipt: t.Nullable(t.String()),
    receiver_name: t.Nullable(t.String()),
    amount: t.Number(),
    phone_number: t.String(),
    remarks: t.String(),
    occasion: t.Nullable(t.String()),
    transaction_id: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'Disbursement' },
)

export const CallbackQuery = t.Object({
  tid: t.Optional(t.String()),
  ref: t.Optional(t.String()),
  sig: t.Optional(t.String()),
  timeout: t.Optional(t.String()),
  /** 1: the result of reconciliation's Transaction Status about a lost disbursement. */
  status: t.Optional(t.String()),
})

export const CallbackAck = t.Object({ ResultCode: t.Integer(), ResultDesc: t.String() })

export const ReconcileReport = t.Object({
  checked: t.Integer(),
  settled: t.Integer(),
  still_pending: t.Integer(),
  failed_to_query: t.Integer(),
  unknown: t.Integer({
    description:
      "requests whose provider answer was lost and that neither their callback nor the provider's record (Pull Transactions) has settled yet",
  }),
})

export const PaymentAlerts = t.Object({
  alerts: t.Array(
    t.Object({
      name: t.Union([
        t.Literal('provider_credentials'),
        t.Literal('provider_setup'),
        t.Literal('payments_unknown'),
        t.Literal('c2b_unverified'),
      ]),
      detail: t.String({ description: 'what is wrong and what to do' }),
      count: t.Integer({ description: 'times raised since it was last clear' }),
      first_at: t.String(),
      last_at: t.String(),
    }),
  ),
  unanswered_over_1h: t.Integer({
    description: 'payments and disbursements with no provider answer for over an hour',
  }),
  oldest_unanswered_at: t.Nullable(t.String()),
})

export const C2bAccountView = t.Object({
  tenant_id: t.String(),
  account_number: t.String({
    description: 'what customers type as the account number on an aggregator paybill',
  }),
  paybills: t.Array(t.String(), { description: "the platform's aggregator paybills" }),
  simulator: t.Boolean({
    description: 'the provider is the built-in simulator: customer payments can be simulated',
  }),
})

export const SimulateC2bBody = t.Object({
  shortcode: t.String(),
  amount: t.Number({ description: 'whole shillings' }),
  phone_number: t.String({ description: 'payer: 07…, 01…, +2547…, 2547…' }),
  account: t.Optional(t.String({ description: 'account number typed (paybill)' })),
  command_id: t.Optional(
    t.Union([t.Literal('CustomerPayBillOnline'), t.Literal('CustomerBuyGoodsOnline')]),
  ),
})

export const SimulateC2bAccepted = t.Object({
  status: t.Literal('accepted'),
  response_description: t.String(),
})

export const ValidationAnswer = t.Object({ ResultCode: t.String(), ResultDesc: t.String() })

export const ProviderRequestBody = t.Object({
  tenant_id: t.Optional(t.String()),
  transaction_id: t.Optional(
    t.String({ description: "the M-Pesa receipt (status and reversal): one of the tenant's own" }),
  ),
  shortcode: t.Optional(
    t.String({
      description: 'a shortcode the tenant holds (default: the one the receipt went to)',
    }),
  ),
  amount: t.Optional(t.Number({ description: 'reversal: whole shillings to reverse' })),
  remarks: t.Optional(t.String({ maxLength: 100 })),
})

export const ProviderRequestView = t.Object({
  id: t.String(),
  kind: t.Union([
    t.Literal('status'),
    t.Literal('balance'),
    t.Literal('reversal'),
    t.Literal('verify', { description: "the platform's own check of a C2B confirmation" }),
  ]),
  status: t.Union([
    t.Literal('pending'),
    t.Literal('completed'),
    t.Literal('failed'),
    t.Literal('timeout'),
  ]),
  conversation_id: t.Nullable(t.String()),
  result_code: t.Nullable(t.Integer()),
  result_desc: t.Nullable(t.String()),
  request: t.Record(t.String(), t.Unknown()),
  result: t.Nullable(
    t.Record(t.String(), t.Unknown(), { description: "the provider's ResultParameters by Key" }),
  ),
  created_at: t.String(),
  updated_at: t.String(),
})
