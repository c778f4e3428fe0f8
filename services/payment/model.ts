import { t } from 'elysia'
import { PaymentStatus as Status, StkPushAccepted } from '../../schema/peers.ts'

export { StkPushAccepted }

export const StkPushBody = t.Object({
  tenant_id: t.Optional(t.String({ description: "the token's tenant (operator: any)" })),
  phone_number: t.String({ description: 'customer phone, 2547XXXXXXXX or 2541XXXXXXXX' }),
  amount: t.Number({ description: 'whole shillings, at least 1 (STK push takes no cents)' }),
  account_reference: t.String({ description: 'caller-chosen reference, at most 12 characters' }),
  transaction_desc: t.String({ description: 'description, at most 13 characters' }),
})

export const PaymentStatusView = t.Object({
  checkout_request_id: t.String(),
  merchant_request_id: t.Nullable(t.String()),
  status: Status,
  result_code: t.Nullable(t.Integer()),
  result_desc: t.Nullable(t.String()),
  mpesa_receipt_number: t.Nullable(t.String()),
  amount: t.Number(),
  phone_number: t.String(),
  account_reference: t.String(),
  transaction_desc: t.String(),
  transaction_id: t.Nullable(t.String({ description: 'the transaction id of the success event' })),
  created_at: t.String(),
  updated_at: t.String(),
})

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
  phone_number: t.String({ description: 'recipient phone, 2547XXXXXXXX or 2541XXXXXXXX' }),
  amount: t.Number({ description: 'whole shillings, at least 1' }),
  remarks: t.String({ description: '2 to 100 characters' }),
  occasion: t.Optional(t.String({ description: 'at most 100 characters' })),
})

export const B2CAccepted = t.Object({
  id: t.String(),
  originator_conversation_id: t.String(),
  conversation_id: t.String(),
  status: Status,
})

export const DisbursementView = t.Object({
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
})

export const CallbackQuery = t.Object({
  tid: t.Optional(t.String()),
  ref: t.Optional(t.String()),
  sig: t.Optional(t.String()),
  timeout: t.Optional(t.String()),
})

export const CallbackAck = t.Object({ ResultCode: t.Integer(), ResultDesc: t.String() })

export const ReconcileReport = t.Object({
  checked: t.Integer(),
  settled: t.Integer(),
  still_pending: t.Integer(),
  failed_to_query: t.Integer(),
  unknown: t.Integer({
    description: 'requests whose provider answer was lost; only their callback can settle them',
  }),
})
