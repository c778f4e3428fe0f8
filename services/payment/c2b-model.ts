import { t } from 'elysia'

/** The C2B parts of the payment API's schemas (model.ts has the rest). */

export const ResponseType = t.Union([t.Literal('Completed'), t.Literal('Cancelled')], {
  description: 'what the provider does when the validation URL does not answer in time',
})

export const RegisterShortcodeBody = t.Object({
  tenant_id: t.Optional(
    t.String({
      description: "the token's tenant; the operator without one: an aggregator paybill",
    }),
  ),
  shortcode: t.String({ description: 'paybill or till number (5 to 7 digits)' }),
  response_type: ResponseType,
  initiator_name: t.Optional(
    t.String({
      maxLength: 100,
      description:
        "the shortcode's API initiator (M-Pesa org portal): each confirmation is verified with a Transaction Status query before it counts. Without one, confirmations are accepted only from Safaricom's addresses and marked unverified",
    }),
  ),
  security_credential: t.Optional(
    t.String({
      maxLength: 2048,
      description: "the initiator's SecurityCredential (kept encrypted; never shown again)",
    }),
  ),
})

const Verification = t.Union([t.Literal('query'), t.Literal('source')], {
  description:
    "'query': confirmations count once a Transaction Status query agrees; 'source': no initiator, confirmations from Safaricom's addresses count as unverified",
})

export const ShortcodeView = t.Object(
  {
    shortcode: t.String(),
    tenant_id: t.String(),
    mode: t.Union([t.Literal('tenant'), t.Literal('aggregator')]),
    response_type: ResponseType,
    status: t.Union([t.Literal('registered'), t.Literal('released')]),
    verification: Verification,
    initiator_name: t.Nullable(t.String()),
    registered_at: t.String(),
    released_at: t.Nullable(t.String()),
  },
  { title: 'Shortcode' },
)

/** Registration and rotation answers: the URLs carry the tokens, so they are shown only here. */
export const ShortcodeWithUrls = t.Composite(
  [
    ShortcodeView,
    t.Object({
      confirmation_url: t.Optional(
        t.String({
          description:
            'carries its own token: shown once (absent from a replay), keep it secret; rotate if it leaks',
        }),
      ),
      validation_url: t.Optional(
        t.String({
          description: 'carries a token of its own, distinct from the confirmation one',
        }),
      ),
      shown_once: t.Optional(
        t.String({
          description:
            'on a replay of the registration: the URLs were shown once and are not kept; rotate to get new ones',
        }),
      ),
    }),
  ],
  { title: 'ShortcodeWithUrls' },
)

export const ShortcodeList = t.Object({ data: t.Array(ShortcodeView) })

export const C2bPaymentStatus = t.Union(
  [
    t.Literal('received'),
    t.Literal('verified'),
    t.Literal('unverified'),
    t.Literal('rejected'),
    t.Literal('unrouted'),
  ],
  {
    description:
      "'received': stored, waiting for the provider to confirm it; 'verified': the provider agreed, counted; 'unverified': no initiator to check with, came from Safaricom's address, counted; 'rejected': the provider disagreed or knows no such transaction, never counted; 'unrouted': an aggregator paybill account nobody holds",
  },
)

export const C2bPaymentView = t.Object(
  {
    id: t.String(),
    trans_id: t.String({ description: "the provider's TransID (M-Pesa receipt)" }),
    shortcode: t.String(),
    transaction_type: t.String(),
    amount: t.Number(),
    bill_ref_number: t.Nullable(t.String()),
    phone_number: t.Nullable(t.String({ description: 'masked as the provider sends it' })),
    payer_name: t.Nullable(t.String()),
    trans_time: t.String(),
    third_party_trans_id: t.Nullable(t.String()),
    status: C2bPaymentStatus,
    status_reason: t.Nullable(
      t.String({ description: 'why it is rejected, unverified or still received' }),
    ),
    counted: t.Boolean({ description: 'it is money in analytics, billing, cashflow and webhooks' }),
    transaction_id: t.Nullable(
      t.String({ description: 'the transaction it became, once counted' }),
    ),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'C2bPayment' },
)

export const C2bPaymentList = t.Object({ data: t.Array(C2bPaymentView) })

export const C2bPaymentQuery = t.Object({
  tenant_id: t.Optional(t.String()),
  status: t.Optional(C2bPaymentStatus),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
})
