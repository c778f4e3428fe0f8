import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * Tenant database: one row per customer-prompt (STK push) payment request. `id` is ours and is
 * known before the provider answers; `checkout_request_id` is the provider's, set once it accepted.
 * Status: initiating → pending → success | failed | cancelled | timeout.
 */
export const payments = sqliteTable(
  'payments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    checkoutRequestId: text('checkout_request_id'),
    merchantRequestId: text('merchant_request_id'),
    phoneNumber: text('phone_number').notNull(),
    amountCents: integer('amount_cents').notNull(),
    accountReference: text('account_reference').notNull(),
    transactionDesc: text('transaction_desc').notNull(),
    status: text('status').notNull(),
    resultCode: integer('result_code'),
    resultDesc: text('result_desc'),
    mpesaReceiptNumber: text('mpesa_receipt_number'),
    transactionDate: text('transaction_date'),
    counterpartyName: text('counterparty_name'),
    /** The raw callback as received, kept until the provider confirmed it. */
    callbackBody: text('callback_body'),
    callbackAt: text('callback_at'),
    userId: text('user_id'),
    transactionId: text('transaction_id'),
    /** 'invoice' when the tenant pays the platform's invoice: not the tenant's own income. */
    purpose: text('purpose'),
    /** The process calling the provider while `initiating` (`pid@boot`): a sibling can tell it died. */
    owner: text('owner'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('payments_checkout').on(t.checkoutRequestId),
    index('payments_tenant_created').on(t.tenantId, t.createdAt),
    index('payments_status').on(t.status, t.createdAt),
  ],
)

/** Tenant database: business-to-customer disbursements (B2C). `id` is the OriginatorConversationID. */
export const disbursements = sqliteTable(
  'disbursements',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    conversationId: text('conversation_id'),
    phoneNumber: text('phone_number').notNull(),
    amountCents: integer('amount_cents').notNull(),
    remarks: text('remarks').notNull(),
    occasion: text('occasion'),
    status: text('status').notNull(),
    resultCode: integer('result_code'),
    resultDesc: text('result_desc'),
    transactionReceipt: text('transaction_receipt'),
    receiverName: text('receiver_name'),
    userId: text('user_id'),
    transactionId: text('transaction_id'),
    /** The process calling the provider while `initiating` (`pid@boot`). */
    owner: text('owner'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('disbursements_tenant_created').on(t.tenantId, t.createdAt)],
)

/** Tenant database: `Idempotency-Key` records, per tenant and route. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    route: text('route').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    ref: text('ref').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.route, t.key] })],
)

/**
 * Tenant database: append-only, hash-chained audit trail of every payment state change. Each row's
 * `hash` is sha256(prev_hash + canonical row); the first row's prev_hash is 64 zeros. One chain per
 * tenant (`tenant_seq` 1, 2, 3, ...), so a tenant's rows keep verifying when they move to another
 * database file with its tier.
 */
export const auditLog = sqliteTable(
  'audit_log',
  {
    seq: integer('seq').primaryKey(),
    id: text('id').notNull().unique(),
    tenantId: text('tenant_id').notNull(),
    entity: text('entity').notNull(),
    entityId: text('entity_id').notNull(),
    action: text('action').notNull(),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    detail: text('detail').notNull(),
    actor: text('actor'),
    at: text('at').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
    tenantSeq: integer('tenant_seq'),
  },
  (t) => [
    index('audit_entity').on(t.entityId, t.seq),
    uniqueIndex('audit_tenant_seq').on(t.tenantId, t.tenantSeq),
  ],
)

/**
 * Platform database: which tenant a payment or disbursement belongs to, by our reference and by the
 * provider's id, with a coarse state the reconciliation job scans.
 */
export const paymentIndex = sqliteTable(
  'payment_index',
  {
    ref: text('ref').primaryKey(),
    kind: text('kind').notNull(),
    tenantId: text('tenant_id').notNull(),
    providerId: text('provider_id'),
    open: integer('open').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('payment_index_provider').on(t.providerId),
    index('payment_index_open').on(t.open, t.createdAt),
  ],
)

/**
 * Platform database: operator alerts about money (the provider refusing the platform's
 * credentials, payments still `unknown` after an hour), one row per alert name, read by the
 * operator API and `mmp doctor`.
 */
export const paymentAlerts = sqliteTable('payment_alerts', {
  name: text('name').primaryKey(),
  detail: text('detail').notNull(),
  count: integer('count').notNull(),
  firstAt: text('first_at').notNull(),
  lastAt: text('last_at').notNull(),
  /** Set when the condition is over (a later call succeeded, nothing is unknown any more). */
  clearedAt: text('cleared_at'),
})

/**
 * Platform database: the C2B shortcodes (tills and paybills) registered with the provider, each
 * held by one tenant. `mode` 'aggregator': a platform paybill the operator registered, whose
 * payments are routed to a tenant by the account number the customer types (`BillRefNumber`).
 * A released shortcode keeps its row (status 'released') until another registration takes it.
 */
export const c2bShortcodes = sqliteTable(
  'c2b_shortcodes',
  {
    shortcode: text('shortcode').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    mode: text('mode').notNull(),
    responseType: text('response_type').notNull(),
    status: text('status').notNull(),
    registeredAt: text('registered_at').notNull(),
    releasedAt: text('released_at'),
    /** Random part of the URL tokens; a new one (token rotation) voids the old URLs. */
    tokenNonce: text('token_nonce'),
    /** The shortcode's own initiator for Transaction Status (credential sealed); null: none. */
    initiatorName: text('initiator_name'),
    securityCredential: text('security_credential'),
  },
  (t) => [index('c2b_shortcodes_tenant').on(t.tenantId, t.status)],
)

/**
 * Platform database: each tenant's account number on an aggregator paybill. Assigned on first
 * use (derived from the tenant id, the next free one on a collision) and never changed.
 */
export const c2bAccounts = sqliteTable('c2b_accounts', {
  tenantId: text('tenant_id').primaryKey(),
  accountNumber: text('account_number').notNull().unique(),
  createdAt: text('created_at').notNull(),
})

/**
 * Tenant database: customer-initiated payments (C2B confirmations) to a tenant's till or paybill,
 * or routed to it from an aggregator paybill. One row per provider `TransID`, so a repeated
 * confirmation changes nothing. The payer's phone is stored masked, as Daraja sends it.
 */
export const c2bPayments = sqliteTable(
  'c2b_payments',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    transId: text('trans_id').notNull(),
    shortcode: text('shortcode').notNull(),
    transactionType: text('transaction_type').notNull(),
    amountCents: integer('amount_cents').notNull(),
    billRefNumber: text('bill_ref_number'),
    invoiceNumber: text('invoice_number'),
    msisdn: text('msisdn'),
    payerName: text('payer_name'),
    transTime: text('trans_time').notNull(),
    orgAccountBalance: text('org_account_balance'),
    thirdPartyTransId: text('third_party_trans_id'),
    transactionId: text('transaction_id').notNull(),
    createdAt: text('created_at').notNull(),
    /**
     * 'received' (stored, waiting for the provider's Transaction Status), 'verified' (the provider
     * agreed: counted), 'unverified' (no initiator to query with; from an allowed source: counted),
     * 'rejected' (the provider disagreed or knows no such TransID: never counted), 'unrouted'.
     */
    status: text('status').notNull().default('unverified'),
    statusReason: text('status_reason'),
    updatedAt: text('updated_at'),
  },
  (t) => [
    uniqueIndex('c2b_payments_trans').on(t.tenantId, t.transId),
    index('c2b_payments_tenant_created').on(t.tenantId, t.createdAt),
  ],
)

/**
 * Tenant database: requests whose answer comes back later to a ResultURL (Transaction Status,
 * Account Balance, Reversal). `id` is ours (the OriginatorConversationID we send and the ref
 * in the result URL's token); `conversation_id` is the provider's.
 */
export const providerRequests = sqliteTable(
  'provider_requests',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    kind: text('kind').notNull(),
    conversationId: text('conversation_id'),
    status: text('status').notNull(),
    request: text('request').notNull(),
    resultCode: integer('result_code'),
    resultDesc: text('result_desc'),
    result: text('result'),
    userId: text('user_id'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('provider_requests_tenant_created').on(t.tenantId, t.createdAt)],
)
