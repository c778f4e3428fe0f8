import { timingSafeEqual } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import { type PaymentFailedEvent, type TransactionEvent, topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError, type FieldError, NotFound, ValidationError } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import { createDaraja, type Daraja, ProviderError, parseDarajaTimestamp } from './daraja.ts'
import { grouped } from './grouped.ts'

export type PaymentStatus =
  | 'initiating'
  | 'pending'
  | 'success'
  | 'failed'
  | 'cancelled'
  | 'timeout'
const OPEN = new Set(['initiating', 'pending'])

export interface PaymentSettings {
  providerUrl: string
  usingSimulator: boolean
  callbackBase: string
  callbackSecret: string
  allowedIps: string[]
  reconcileAfterS: number
}

export function paymentSettings(ctx: ServiceContext): PaymentSettings {
  const s = ctx.settings as Record<string, unknown>
  const base = (s['mpesa.base_url'] as string | null | undefined) ?? null
  const secrets = (s.secrets ?? {}) as { callbackSecret?: string }
  return {
    providerUrl: base ?? String(s.simulator_url ?? 'http://127.0.0.1:8099'),
    usingSimulator: !base,
    callbackBase: String(
      (s['mpesa.callback_base_url'] as string | null | undefined) ??
        s.gateway_url ??
        'http://127.0.0.1:9000',
    ).replace(/\/+$/, ''),
    callbackSecret:
      (s['mpesa.callback_secret'] as string | null | undefined) ||
      secrets.callbackSecret ||
      Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'),
    allowedIps: ((s['mpesa.allowed_ips'] as string[] | undefined) ?? []).filter(Boolean),
    reconcileAfterS: Number(s['mpesa.reconcile_after_s'] ?? 120),
  }
}

export function providerFromSettings(ctx: ServiceContext, url: string): Daraja {
  const s = ctx.settings as Record<string, unknown>
  const str = (k: string, d: string) => String((s[k] as string | null | undefined) ?? d)
  return createDaraja(
    {
      baseUrl: url,
      consumerKey: str('mpesa.consumer_key', 'mmp-simulator-key'),
      consumerSecret: str('mpesa.consumer_secret', 'mmp-simulator-secret'),
      shortcode: str('mpesa.shortcode', '174379'),
      passkey: str('mpesa.passkey', 'mmp-simulator-passkey'),
      initiatorName: str('mpesa.b2c_initiator', 'mmp'),
      securityCredential: str('mpesa.b2c_security_credential', 'mmp-simulator-credential'),
    },
    () => ctx.clock.now(),
  )
}

// ---------------------------------------------------------------------------------------------
// Validation (Daraja's own limits, checked up front — DESIGN §8)

const PHONE = /^254[17]\d{8}$/
const MAX_AMOUNT = 250_000

function checkPhone(errors: FieldError[], field: string, v: unknown) {
  if (typeof v !== 'string' || !PHONE.test(v))
    errors.push({ field, message: 'must be a Kenyan mobile number 2547XXXXXXXX or 2541XXXXXXXX' })
}

function checkWholeShillings(errors: FieldError[], field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    errors.push({ field, message: 'must be a number' })
    return 0
  }
  if (!Number.isInteger(v)) {
    errors.push({
      field,
      message: 'must be a whole number of shillings (M-Pesa takes no cents)',
    })
    return 0
  }
  if (v < 1) errors.push({ field, message: 'must be at least 1' })
  else if (v > MAX_AMOUNT) errors.push({ field, message: `must be at most ${MAX_AMOUNT}` })
  return v
}

function checkText(errors: FieldError[], field: string, v: unknown, max: number, min = 1) {
  if (typeof v !== 'string') errors.push({ field, message: 'must be a string' })
  else if (v.trim().length < min) errors.push({ field, message: 'must not be empty' })
  else if (v.length > max) errors.push({ field, message: `must be at most ${max} characters` })
}

function throwIfAny(errors: FieldError[]) {
  if (errors.length)
    throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors)
}

export interface StkPushBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  account_reference: string
  transaction_desc: string
}

export interface B2CBody {
  tenant_id?: string | undefined
  phone_number: string
  amount: number
  remarks: string
  occasion?: string | undefined
}

// ---------------------------------------------------------------------------------------------
// Rows

interface PaymentRow {
  id: string
  tenant_id: string
  purpose: string | null
  checkout_request_id: string | null
  merchant_request_id: string | null
  phone_number: string
  amount_cents: number
  account_reference: string
  transaction_desc: string
  status: PaymentStatus
  result_code: number | null
  result_desc: string | null
  mpesa_receipt_number: string | null
  transaction_date: string | null
  counterparty_name: string | null
  callback_body: string | null
  callback_at: string | null
  user_id: string | null
  transaction_id: string | null
  created_at: string
  updated_at: string
}

interface DisbursementRow {
  id: string
  tenant_id: string
  conversation_id: string | null
  phone_number: string
  amount_cents: number
  remarks: string
  occasion: string | null
  status: PaymentStatus
  result_code: number | null
  result_desc: string | null
  transaction_receipt: string | null
  receiver_name: string | null
  user_id: string | null
  transaction_id: string | null
  created_at: string
  updated_at: string
}

export function paymentView(p: PaymentRow) {
  return {
    checkout_request_id: p.checkout_request_id ?? '',
    merchant_request_id: p.merchant_request_id,
    status: (p.status === 'initiating' ? 'pending' : p.status) as Exclude<
      PaymentStatus,
      'initiating'
    >,
    result_code: p.result_code,
    result_desc: p.result_desc,
    mpesa_receipt_number: p.mpesa_receipt_number,
    amount: toMajor(p.amount_cents),
    phone_number: p.phone_number,
    account_reference: p.account_reference,
    transaction_desc: p.transaction_desc,
    transaction_id: p.transaction_id,
    created_at: p.created_at,
    updated_at: p.updated_at,
  }
}

export function disbursementView(d: DisbursementRow) {
  return {
    id: d.id,
    originator_conversation_id: d.id,
    conversation_id: d.conversation_id,
    status: (d.status === 'initiating' ? 'pending' : d.status) as Exclude<
      PaymentStatus,
      'initiating'
    >,
    result_code: d.result_code,
    result_desc: d.result_desc,
    transaction_receipt: d.transaction_receipt,
    receiver_name: d.receiver_name,
    amount: toMajor(d.amount_cents),
    phone_number: d.phone_number,
    remarks: d.remarks,
    occasion: d.occasion,
    transaction_id: d.transaction_id,
    created_at: d.created_at,
    updated_at: d.updated_at,
  }
}

/** Daraja result code → our status. */
export function statusOfResult(code: number): Exclude<PaymentStatus, 'initiating' | 'pending'> {
  if (code === 0) return 'success'
  if (code === 1032) return 'cancelled'
  if (code === 1037 || code === 1019) return 'timeout'
  return 'failed'
}

/** Callback bodies are read as text so the token is checked before anything is parsed. */
function jsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw)
  } catch {
    throw new ValidationError('the callback body is not JSON', [
      { field: '(body)', message: 'must be JSON' },
    ])
  }
}

class InvalidCallback extends AppError {
  constructor(detail: string) {
    super('INVALID_SIGNATURE', detail)
  }
}

const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')

/** JSON with sorted keys, so the same body always hashes the same. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`
  if (v && typeof v === 'object')
    return `{${Object.keys(v as object)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(v)
}

// ---------------------------------------------------------------------------------------------

export interface Answer<T = unknown> {
  status: number
  body: T
}

export interface ReconcileReport {
  checked: number
  settled: number
  still_pending: number
  failed_to_query: number
}

/** The payment service's logic: everything the routes and the reconciliation job call. */
export function createPayments(ctx: ServiceContext, opts: { provider?: Daraja } = {}) {
  const cfg = paymentSettings(ctx)
  const provider = opts.provider ?? providerFromSettings(ctx, cfg.providerUrl)
  const inflight = new Map<string, Promise<unknown>>()
  const nowIso = () => ctx.clock.now().toISOString()
  const tuned = new WeakSet<Db>()
  /**
   * The platform index is a lookup aid (checkout id → tenant, open payments to reconcile); the
   * money itself is in the tenant databases, synced FULL. WAL with synchronous NORMAL survives a
   * process crash, so the index skips the fsync per commit that FULL costs.
   */
  const platform = () => {
    const db = ctx.registry.platform('payment')
    if (!tuned.has(db)) {
      db.sqlite.run('PRAGMA synchronous = NORMAL')
      tuned.add(db)
    }
    return db
  }
  const tenantDb = (tid: string) => ctx.registry.tenant('payment', tid)

  const allowList = cfg.allowedIps.map((entry): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry)
        return [range.kind() === 'ipv6' ? ipaddr.process(range.toString()) : range, bits]
      }
      const ip = ipaddr.process(entry)
      return [ip, ip.kind() === 'ipv4' ? 32 : 128]
    } catch {
      throw new Error(`mpesa.allowed_ips: '${entry}' is not an IP address or CIDR range`)
    }
  })

  // --- callback tokens ------------------------------------------------------------------------

  const sign = (kind: 'stk' | 'b2c', tid: string, ref: string) =>
    new Bun.CryptoHasher('sha256', cfg.callbackSecret)
      .update(`${kind}:${tid}:${ref}`)
      .digest('base64url')

  const callbackUrl = (kind: 'stk' | 'b2c', tid: string, ref: string, extra = '') =>
    `${cfg.callbackBase}/api/v1/payments/callback${kind === 'b2c' ? '/b2c' : ''}?tid=${encodeURIComponent(tid)}&ref=${encodeURIComponent(ref)}&sig=${sign(kind, tid, ref)}${extra}`

  const checkToken = (
    kind: 'stk' | 'b2c',
    query: Record<string, string | undefined>,
  ): { tid: string; ref: string } => {
    const { tid, ref, sig } = query
    if (!tid || !ref || !sig) throw new InvalidCallback('the callback token is missing')
    if (!isTenantId(tid)) throw new InvalidCallback('the callback token is invalid')
    const expected = Buffer.from(sign(kind, tid, ref))
    const given = Buffer.from(sig)
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new InvalidCallback('the callback token is invalid')
    return { tid, ref }
  }

  /**
   * A body signature, when the sender adds one: `X-Callback-Signature: sha256=<hex of
   * HMAC-SHA256(callback_secret, raw body)>`. Wrong → 401; right → the body is authentic and a
   * success needs no STK query. Daraja itself sends none.
   */
  const checkBodySignature = (raw: unknown, header: string | null | undefined): boolean => {
    if (!header) return false
    if (typeof raw !== 'string') throw new InvalidCallback('the body signature cannot be checked')
    const expected = Buffer.from(
      `sha256=${new Bun.CryptoHasher('sha256', cfg.callbackSecret).update(raw).digest('hex')}`,
    )
    const given = Buffer.from(header.trim())
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new InvalidCallback('the body signature is invalid')
    return true
  }

  /** The optional source-IP allow-list (Safaricom's published ranges in production). */
  const checkSource = (ip: string | null) => {
    if (allowList.length === 0) return
    let addr: ipaddr.IPv4 | ipaddr.IPv6
    try {
      addr = ipaddr.process(ip ?? '')
    } catch {
      throw new InvalidCallback('the callback source address is not allowed')
    }
    const ok = allowList.some(
      ([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits),
    )
    if (!ok) throw new InvalidCallback('the callback source address is not allowed')
  }

  // --- rows -----------------------------------------------------------------------------------

  const getPayment = (db: Db, tid: string, id: string) =>
    db.sqlite
      .query<PaymentRow, [string, string]>('SELECT * FROM payments WHERE tenant_id = ? AND id = ?')
      .get(tid, id)

  const getDisbursement = (db: Db, tid: string, id: string) =>
    db.sqlite
      .query<DisbursementRow, [string, string]>(
        'SELECT * FROM disbursements WHERE tenant_id = ? AND id = ?',
      )
      .get(tid, id)

  const setIndex = (ref: string, fields: { providerId?: string; open?: boolean }) => {
    const db = platform()
    db.write(() => {
      if (fields.providerId !== undefined)
        db.sqlite
          .query('UPDATE payment_index SET provider_id = ?, updated_at = ? WHERE ref = ?')
          .run(fields.providerId, nowIso(), ref)
      if (fields.open !== undefined)
        db.sqlite
          .query('UPDATE payment_index SET open = ?, updated_at = ? WHERE ref = ?')
          .run(fields.open ? 1 : 0, nowIso(), ref)
    })
  }

  const closeIndex = (refs: string[]) => {
    if (refs.length === 0) return
    const db = platform()
    const at = nowIso()
    db.write(() => {
      const q = db.sqlite.query('UPDATE payment_index SET open = 0, updated_at = ? WHERE ref = ?')
      for (const ref of refs) q.run(at, ref)
    })
  }

  // --- idempotency ----------------------------------------------------------------------------

  type IdemRow = {
    request_hash: string
    ref: string
    response_status: number | null
    response_body: string | null
  }
  const readIdem = (db: Db, tid: string, route: string, key: string) =>
    db.sqlite
      .query<IdemRow, [string, string, string]>(
        'SELECT request_hash, ref, response_status, response_body FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?',
      )
      .get(tid, route, key)

  /**
   * The answer of a request whose process died before storing it: the 202 when the provider had
   * accepted it, 'retry' when it ended without reaching the provider, null while undecided.
   */
  const recoverAnswer = (
    db: Db,
    tid: string,
    route: string,
    ref: string,
  ): Answer | 'retry' | null => {
    if (route === 'stkpush') {
      const p = getPayment(db, tid, ref)
      if (!p) return 'retry'
      if (p.checkout_request_id)
        return {
          status: 202,
          body: {
            checkout_request_id: p.checkout_request_id,
            merchant_request_id: p.merchant_request_id ?? '',
            status: 'pending',
          },
        }
      return p.status === 'initiating' ? null : 'retry'
    }
    const d = getDisbursement(db, tid, ref)
    if (!d) return 'retry'
    if (d.conversation_id)
      return {
        status: 202,
        body: {
          id: d.id,
          originator_conversation_id: d.id,
          conversation_id: d.conversation_id,
          status: 'pending',
        },
      }
    return d.status === 'initiating' ? null : 'retry'
  }

  /** A stored answer for this key, waiting briefly for one still being made. */
  const replayIdem = async (
    db: Db,
    tid: string,
    route: string,
    key: string,
    hash: string,
  ): Promise<Answer | null> => {
    const deadline = Date.now() + 15_000
    for (;;) {
      const row = readIdem(db, tid, route, key)
      if (!row) return null
      if (row.request_hash !== hash)
        throw new AppError(
          'IDEMPOTENCY_KEY_REUSED',
          'this Idempotency-Key was used with a different request body',
        )
      if (row.response_status !== null)
        return { status: row.response_status, body: JSON.parse(row.response_body ?? 'null') }
      const pending = inflight.get(row.ref)
      if (pending) {
        await pending.catch(() => {})
        continue
      }
      // No answer stored and nobody here working on it: the process that took it died mid-request.
      const recovered = recoverAnswer(db, tid, route, row.ref)
      if (recovered === 'retry') {
        db.write(() =>
          db.sqlite
            .query('DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?')
            .run(tid, route, key),
        )
        return null
      }
      if (recovered) return recovered
      if (Date.now() > deadline)
        throw new AppError('CONFLICT', 'a request with this Idempotency-Key is still in progress')
      else await Bun.sleep(20)
    }
  }

  const checkKey = (key: string | null | undefined): string | null => {
    if (key === null || key === undefined || key === '') return null
    if (key.length > 255)
      throw new ValidationError('Idempotency-Key: must be at most 255 characters', [
        { field: 'Idempotency-Key', message: 'must be at most 255 characters' },
      ])
    return key
  }

  // --- events ---------------------------------------------------------------------------------

  const emitFailed = (db: Db, p: PaymentRow, status: string, code: number | null, desc: string) => {
    const data: PaymentFailedEvent = {
      checkout_request_id: p.checkout_request_id ?? p.id,
      status,
      result_code: code,
      result_desc: desc,
      amount: toMajor(p.amount_cents),
      phone_number: p.phone_number,
      account_reference: p.account_reference,
    }
    emitEvent(db, { topic: topics.transactionsFailed, tenantId: p.tenant_id, data }, ctx.clock)
  }

  /** Another request with the same Idempotency-Key won the race: answer as it does. */
  async function answerLostRace(
    db: Db,
    tid: string,
    route: string,
    key: string,
    hash: string,
  ): Promise<Answer> {
    const replay = await replayIdem(db, tid, route, key, hash)
    if (replay) return replay
    throw new AppError('CONFLICT', 'a request with this Idempotency-Key is still in progress')
  }

  /** The platform index maps a payment or disbursement ref to its tenant for callbacks. */
  function indexRef(ref: string, kind: 'stk' | 'b2c', tid: string, at: string): void {
    const pdb = platform()
    pdb.write(() =>
      pdb.sqlite
        .query(
          'INSERT INTO payment_index (ref, kind, tenant_id, open, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)',
        )
        .run(ref, kind, tid, at, at),
    )
  }

  // --- STK push -------------------------------------------------------------------------------

  async function stkPush(
    actor: Actor,
    body: StkPushBody,
    idemKey: string | null | undefined,
    requestId?: string,
    invoicePayment = false,
  ): Promise<Answer> {
    const tid = tenantFor(actor, body.tenant_id)
    const errors: FieldError[] = []
    checkPhone(errors, 'phone_number', body.phone_number)
    const amount = checkWholeShillings(errors, 'amount', body.amount)
    checkText(errors, 'account_reference', body.account_reference, 12)
    checkText(errors, 'transaction_desc', body.transaction_desc, 13)
    throwIfAny(errors)
    const key = checkKey(idemKey)
    const db = tenantDb(tid)
    const route = 'stkpush'
    const hash = sha256(stableJson({ ...body, tenant_id: tid }))
    if (key) {
      const replay = await replayIdem(db, tid, route, key, hash)
      if (replay) return replay
    }
    // Paying the platform's own invoice is how a suspended tenant gets back; it is not metered.
    if (!invoicePayment) assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' })

    const id = newId('pay')
    const at = nowIso()
    const inserted = await grouped(db, () => {
      if (key) {
        const res = db.sqlite
          .query(
            'INSERT OR IGNORE INTO idempotency_keys (tenant_id, route, key, request_hash, ref, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(tid, route, key, hash, id, at)
        if (res.changes === 0) return false
      }
      db.sqlite
        .query(
          `INSERT INTO payments (id, tenant_id, phone_number, amount_cents, account_reference,
            transaction_desc, status, user_id, purpose, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?, ?)`,
        )
        .run(
          id,
          tid,
          body.phone_number,
          amount * 100,
          body.account_reference,
          body.transaction_desc,
          actor.userId,
          invoicePayment ? 'invoice' : null,
          at,
          at,
        )
      appendAudit(db, {
        tenantId: tid,
        entity: 'payment',
        entityId: id,
        action: 'created',
        fromStatus: null,
        toStatus: 'initiating',
        detail: {
          amount,
          phone_number: body.phone_number,
          account_reference: body.account_reference,
        },
        actor: actor.userId,
        at,
      })
      return true
    })
    if (!inserted) return answerLostRace(db, tid, route, key!, hash)
    indexRef(id, 'stk', tid, at)

    const work = (async (): Promise<Answer> => {
      let accepted: Awaited<ReturnType<Daraja['stkPush']>>
      try {
        accepted = await provider.stkPush({
          phoneNumber: body.phone_number,
          amount,
          accountReference: body.account_reference,
          transactionDesc: body.transaction_desc,
          callbackUrl: callbackUrl('stk', tid, id),
        })
      } catch (err) {
        const desc =
          err instanceof ProviderError
            ? err.message
            : `provider call failed: ${(err as Error).message}`
        ctx.log.warn('STK push was not accepted by the provider', {
          request_id: requestId,
          payment: id,
          error: desc,
        })
        db.write(() => {
          const p = getPayment(db, tid, id)!
          const upd = nowIso()
          db.sqlite
            .query(
              "UPDATE payments SET status = 'failed', result_desc = ?, updated_at = ? WHERE id = ?",
            )
            .run(desc, upd, id)
          appendAudit(db, {
            tenantId: tid,
            entity: 'payment',
            entityId: id,
            action: 'rejected',
            fromStatus: 'initiating',
            toStatus: 'failed',
            detail: { reason: desc },
            actor: actor.userId,
            at: upd,
          })
          emitFailed(db, p, 'failed', null, desc)
          if (key)
            db.sqlite
              .query('DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?')
              .run(tid, route, key)
        })
        setIndex(id, { open: false })
        throw new AppError(
          'BAD_GATEWAY',
          `the payment provider did not accept the request: ${desc}`,
        )
      }
      const answer = {
        checkout_request_id: accepted.CheckoutRequestID,
        merchant_request_id: accepted.MerchantRequestID,
        status: 'pending' as const,
      }
      await grouped(db, () => {
        const upd = nowIso()
        const moved = db.sqlite
          .query(
            `UPDATE payments SET checkout_request_id = ?, merchant_request_id = ?, status = 'pending',
              updated_at = ? WHERE id = ? AND status = 'initiating'`,
          )
          .run(accepted.CheckoutRequestID, accepted.MerchantRequestID, upd, id)
        if (moved.changes === 1) markAccepted(db, tid, id, accepted, actor.userId, upd)
        if (key)
          db.sqlite
            .query(
              'UPDATE idempotency_keys SET response_status = 202, response_body = ? WHERE tenant_id = ? AND route = ? AND key = ?',
            )
            .run(JSON.stringify(answer), tid, route, key)
      })
      setIndex(id, { providerId: accepted.CheckoutRequestID })
      return { status: 202, body: answer }
    })()
    inflight.set(id, work)
    try {
      return await work
    } finally {
      inflight.delete(id)
    }
  }

  /** The audit row and usage event of a request the provider accepted (inside a write). */
  const markAccepted = (
    db: Db,
    tid: string,
    id: string,
    accepted: { CheckoutRequestID: string; MerchantRequestID: string },
    actorId: string | null,
    at: string,
  ) => {
    appendAudit(db, {
      tenantId: tid,
      entity: 'payment',
      entityId: id,
      action: 'accepted',
      fromStatus: 'initiating',
      toStatus: 'pending',
      detail: {
        checkout_request_id: accepted.CheckoutRequestID,
        merchant_request_id: accepted.MerchantRequestID,
      },
      actor: actorId,
      at,
    })
    emitEvent(
      db,
      { topic: topics.usage, tenantId: tid, data: { metric: 'payments', quantity: 1 } },
      ctx.clock,
    )
  }

  /** Waits for this process's initiation of a payment to finish (the callback can beat it). */
  const awaitInitiated = async (db: Db, tid: string, id: string): Promise<PaymentRow | null> => {
    const pending = inflight.get(id)
    if (pending) await pending.catch(() => {})
    return getPayment(db, tid, id)
  }

  interface SuccessMeta {
    receipt: string | null
    transactionDate: string | null
    counterpartyName: string | null
  }

  const metaOf = (items: unknown): SuccessMeta => {
    const list = Array.isArray(items) ? (items as Array<{ Name?: unknown; Value?: unknown }>) : []
    const get = (name: string) => list.find((i) => i && i.Name === name)?.Value
    const receipt = get('MpesaReceiptNumber')
    const date = parseDarajaTimestamp(get('TransactionDate'))
    const names = ['FirstName', 'MiddleName', 'LastName']
      .map((n) => get(n))
      .filter((v) => typeof v === 'string' && v)
    return {
      receipt: receipt === undefined || receipt === null ? null : String(receipt),
      transactionDate: date ? date.toISOString() : null,
      counterpartyName: names.length ? names.join(' ') : null,
    }
  }

  /** Moves an open payment to its final state with its audit row and event; false if it was final. */
  const settle = async (
    db: Db,
    tid: string,
    id: string,
    code: number,
    desc: string,
    meta: SuccessMeta | null,
    via: string,
  ): Promise<boolean> => {
    const done = await grouped(db, () => {
      const p = getPayment(db, tid, id)
      if (!p || !OPEN.has(p.status)) return false
      const status = statusOfResult(code)
      const at = nowIso()
      const txnId = status === 'success' ? newId('txn') : null
      db.sqlite
        .query(
          `UPDATE payments SET status = ?, result_code = ?, result_desc = ?, mpesa_receipt_number = ?,
            transaction_date = ?, counterparty_name = ?, transaction_id = ?, updated_at = ?
           WHERE id = ?`,
        )
        .run(
          status,
          code,
          desc,
          status === 'success' ? (meta?.receipt ?? null) : null,
          status === 'success' ? (meta?.transactionDate ?? null) : null,
          meta?.counterpartyName ?? null,
          txnId,
          at,
          id,
        )
      appendAudit(db, {
        tenantId: tid,
        entity: 'payment',
        entityId: id,
        action: 'settled',
        fromStatus: p.status,
        toStatus: status,
        detail: {
          result_code: code,
          result_desc: desc,
          via,
          ...(status === 'success' ? { mpesa_receipt_number: meta?.receipt ?? null } : {}),
        },
        actor: null,
        at,
      })
      if (status === 'success') {
        const data: TransactionEvent = {
          transaction_id: txnId!,
          occurred_at: meta?.transactionDate ?? at,
          amount: toMajor(p.amount_cents),
          direction: 'in',
          counterparty_name: meta?.counterpartyName ?? null,
          counterparty_phone: p.phone_number,
          description: `M-Pesa payment ${p.account_reference}`,
          receipt_number: meta?.receipt ?? null,
          balance: null,
          source: 'payment',
          user_id: p.user_id,
          checkout_request_id: p.checkout_request_id ?? p.id,
          account_reference: p.account_reference,
          ...(p.purpose ? { purpose: p.purpose } : {}),
        }
        emitEvent(db, { topic: topics.transactionsSuccess, tenantId: tid, data }, ctx.clock)
      } else {
        emitFailed(db, p, status, code, desc)
      }
      return true
    })
    // The index row is closed in batches by the reconciliation job, off the hot path.
    return done
  }

  /** Asks the provider for the final result; settles when there is one. */
  const confirmByQuery = async (
    db: Db,
    tid: string,
    p: PaymentRow,
    meta: SuccessMeta | null,
    via: string,
  ): Promise<'settled' | 'pending'> => {
    if (!p.checkout_request_id) return 'pending'
    const r = await provider.stkQuery(p.checkout_request_id)
    if (r.state === 'processing') return 'pending'
    await settle(db, tid, p.id, r.resultCode, r.resultDesc, r.resultCode === 0 ? meta : null, via)
    return 'settled'
  }

  async function stkCallback(
    query: Record<string, string | undefined>,
    body: unknown,
    sourceIp: string | null,
    requestId?: string,
    bodySignature?: string | null,
  ) {
    const { tid, ref } = checkToken('stk', query)
    checkSource(sourceIp)
    const signed = checkBodySignature(body, bodySignature)
    body = jsonBody(body)
    const cb = (body as { Body?: { stkCallback?: Record<string, unknown> } } | null)?.Body
      ?.stkCallback
    const checkoutId = cb?.CheckoutRequestID
    if (!cb || typeof checkoutId !== 'string')
      throw new InvalidCallback('the callback names no CheckoutRequestID')
    const db = tenantDb(tid)
    let p = await awaitInitiated(db, tid, ref)
    if (p?.status === 'initiating' && !p.checkout_request_id && !inflight.has(ref)) {
      // The process that asked the provider died before recording its answer: the token in the
      // URL authenticates this callback, so it binds the payment to this checkout id now.
      const at = nowIso()
      const merchant = String(cb.MerchantRequestID ?? '')
      db.write(() => {
        const moved = db.sqlite
          .query(
            `UPDATE payments SET checkout_request_id = ?, merchant_request_id = ?, status = 'pending',
              updated_at = ? WHERE id = ? AND status = 'initiating' AND checkout_request_id IS NULL`,
          )
          .run(checkoutId, merchant, at, ref)
        if (moved.changes === 1)
          markAccepted(
            db,
            tid,
            ref,
            { CheckoutRequestID: checkoutId, MerchantRequestID: merchant },
            null,
            at,
          )
      })
      setIndex(ref, { providerId: checkoutId })
      p = getPayment(db, tid, ref)
    }
    if (!p || p.checkout_request_id !== checkoutId)
      throw new InvalidCallback('the callback token does not belong to this checkout request')
    const code = Number(cb.ResultCode)
    if (!Number.isInteger(code)) throw new InvalidCallback('the callback has no ResultCode')
    const desc = String(cb.ResultDesc ?? '')
    if (!OPEN.has(p.status)) return { ResultCode: 0, ResultDesc: 'Accepted' }
    if (code !== 0) {
      await settle(db, tid, p.id, code, desc, null, 'callback')
      return { ResultCode: 0, ResultDesc: 'Accepted' }
    }
    // A success: count the money only once the provider confirms it (Daraja does not sign its
    // callbacks). When it cannot confirm yet, keep what the callback said for reconciliation.
    const meta = metaOf((cb.CallbackMetadata as { Item?: unknown } | undefined)?.Item)
    if (signed) {
      await settle(db, tid, p.id, 0, desc, meta, 'signed callback')
      return { ResultCode: 0, ResultDesc: 'Accepted' }
    }
    let outcome: 'settled' | 'pending' = 'pending'
    try {
      outcome = await confirmByQuery(db, tid, p, meta, 'callback+query')
    } catch (err) {
      ctx.log.warn('could not confirm a payment callback; reconciliation will', {
        request_id: requestId,
        payment: p.id,
        error: (err as Error).message,
      })
    }
    if (outcome === 'pending')
      db.write(() =>
        db.sqlite
          .query(
            'UPDATE payments SET callback_body = ?, callback_at = ? WHERE id = ? AND callback_body IS NULL',
          )
          .run(JSON.stringify(body), nowIso(), p.id),
      )
    return { ResultCode: 0, ResultDesc: 'Accepted' }
  }

  // --- status and lists -----------------------------------------------------------------------

  function status(actor: Actor, checkoutId: string) {
    let tid = actor.tenantId
    if (isOperator(actor)) {
      const row = platform()
        .sqlite.query<{ tenant_id: string }, [string]>(
          'SELECT tenant_id FROM payment_index WHERE provider_id = ?',
        )
        .get(checkoutId)
      if (row) tid = row.tenant_id
    }
    const p = tenantDb(tid)
      .sqlite.query<PaymentRow, [string, string]>(
        'SELECT * FROM payments WHERE tenant_id = ? AND checkout_request_id = ?',
      )
      .get(tid, checkoutId)
    if (!p) throw new NotFound('payment', checkoutId)
    return paymentView(p)
  }

  function list(
    actor: Actor,
    q: {
      tenant_id?: string | undefined
      limit?: number | undefined
      cursor?: string | undefined
      status?: string | undefined
    },
  ) {
    const tid = tenantFor(actor, q.tenant_id)
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 500)
    const params: (string | number)[] = [tid]
    let where = 'tenant_id = ?'
    if (q.cursor) {
      where += ' AND id < ?'
      params.push(q.cursor)
    }
    if (q.status) {
      where +=
        q.status === 'pending' ? " AND status IN ('pending','initiating')" : ' AND status = ?'
      if (q.status !== 'pending') params.push(q.status)
    }
    params.push(limit + 1)
    const rows = tenantDb(tid)
      .sqlite.query<PaymentRow, (string | number)[]>(
        `SELECT * FROM payments WHERE ${where} ORDER BY id DESC LIMIT ?`,
      )
      .all(...params)
    const has_more = rows.length > limit
    const page = rows.slice(0, limit)
    return {
      data: page.map((p) => ({ id: p.id, ...paymentView(p) })),
      next_cursor: has_more ? page[page.length - 1]!.id : null,
      has_more,
    }
  }

  // --- B2C ------------------------------------------------------------------------------------

  async function b2cPay(
    actor: Actor,
    body: B2CBody,
    idemKey: string | null | undefined,
    requestId?: string,
  ): Promise<Answer> {
    const tid = tenantFor(actor, body.tenant_id)
    const errors: FieldError[] = []
    checkPhone(errors, 'phone_number', body.phone_number)
    const amount = checkWholeShillings(errors, 'amount', body.amount)
    checkText(errors, 'remarks', body.remarks, 100, 2)
    if (body.occasion !== undefined && body.occasion !== null)
      checkText(errors, 'occasion', body.occasion, 100, 0)
    throwIfAny(errors)
    const key = checkKey(idemKey)
    const db = tenantDb(tid)
    const route = 'b2c'
    const hash = sha256(stableJson({ ...body, tenant_id: tid }))
    if (key) {
      const replay = await replayIdem(db, tid, route, key, hash)
      if (replay) return replay
    }
    assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' })
    const id = newId('b2c')
    const at = nowIso()
    const inserted = await grouped(db, () => {
      if (key) {
        const res = db.sqlite
          .query(
            'INSERT OR IGNORE INTO idempotency_keys (tenant_id, route, key, request_hash, ref, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(tid, route, key, hash, id, at)
        if (res.changes === 0) return false
      }
      db.sqlite
        .query(
          `INSERT INTO disbursements (id, tenant_id, phone_number, amount_cents, remarks, occasion,
            status, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?)`,
        )
        .run(
          id,
          tid,
          body.phone_number,
          amount * 100,
          body.remarks,
          body.occasion ?? null,
          actor.userId,
          at,
          at,
        )
      appendAudit(db, {
        tenantId: tid,
        entity: 'disbursement',
        entityId: id,
        action: 'created',
        fromStatus: null,
        toStatus: 'initiating',
        detail: { amount, phone_number: body.phone_number },
        actor: actor.userId,
        at,
      })
      return true
    })
    if (!inserted) return answerLostRace(db, tid, route, key!, hash)
    indexRef(id, 'b2c', tid, at)
    const work = (async (): Promise<Answer> => {
      let accepted: Awaited<ReturnType<Daraja['b2c']>>
      try {
        accepted = await provider.b2c({
          originatorConversationId: id,
          phoneNumber: body.phone_number,
          amount,
          remarks: body.remarks,
          occasion: body.occasion ?? '',
          resultUrl: callbackUrl('b2c', tid, id),
          timeoutUrl: callbackUrl('b2c', tid, id, '&timeout=1'),
        })
      } catch (err) {
        const desc =
          err instanceof ProviderError
            ? err.message
            : `provider call failed: ${(err as Error).message}`
        ctx.log.warn('B2C was not accepted by the provider', {
          request_id: requestId,
          id,
          error: desc,
        })
        db.write(() => {
          const upd = nowIso()
          db.sqlite
            .query(
              "UPDATE disbursements SET status = 'failed', result_desc = ?, updated_at = ? WHERE id = ?",
            )
            .run(desc, upd, id)
          appendAudit(db, {
            tenantId: tid,
            entity: 'disbursement',
            entityId: id,
            action: 'rejected',
            fromStatus: 'initiating',
            toStatus: 'failed',
            detail: { reason: desc },
            actor: actor.userId,
            at: upd,
          })
          if (key)
            db.sqlite
              .query('DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?')
              .run(tid, route, key)
        })
        setIndex(id, { open: false })
        throw new AppError(
          'BAD_GATEWAY',
          `the payment provider did not accept the request: ${desc}`,
        )
      }
      const answer = {
        id,
        originator_conversation_id: id,
        conversation_id: accepted.ConversationID,
        status: 'pending' as const,
      }
      await grouped(db, () => {
        const upd = nowIso()
        db.sqlite
          .query(
            "UPDATE disbursements SET conversation_id = ?, status = 'pending', updated_at = ? WHERE id = ? AND status = 'initiating'",
          )
          .run(accepted.ConversationID, upd, id)
        appendAudit(db, {
          tenantId: tid,
          entity: 'disbursement',
          entityId: id,
          action: 'accepted',
          fromStatus: 'initiating',
          toStatus: 'pending',
          detail: { conversation_id: accepted.ConversationID },
          actor: actor.userId,
          at: upd,
        })
        emitEvent(
          db,
          { topic: topics.usage, tenantId: tid, data: { metric: 'payments', quantity: 1 } },
          ctx.clock,
        )
        if (key)
          db.sqlite
            .query(
              'UPDATE idempotency_keys SET response_status = 202, response_body = ? WHERE tenant_id = ? AND route = ? AND key = ?',
            )
            .run(JSON.stringify(answer), tid, route, key)
      })
      setIndex(id, { providerId: accepted.ConversationID })
      return { status: 202, body: answer }
    })()
    inflight.set(id, work)
    try {
      return await work
    } finally {
      inflight.delete(id)
    }
  }

  async function b2cResult(
    query: Record<string, string | undefined>,
    body: unknown,
    sourceIp: string | null,
  ) {
    const { tid, ref } = checkToken('b2c', query)
    checkSource(sourceIp)
    body = jsonBody(body)
    const result = (body as { Result?: Record<string, unknown> } | null)?.Result
    if (!result) throw new InvalidCallback('the result names no transaction')
    const db = tenantDb(tid)
    const pending = inflight.get(ref)
    if (pending) await pending.catch(() => {})
    const d = getDisbursement(db, tid, ref)
    // OriginatorConversationID is our id; ConversationID must match the provider's answer when we
    // recorded one (a process that died mid-call recorded none).
    if (
      !d ||
      (result.OriginatorConversationID !== undefined && result.OriginatorConversationID !== d.id) ||
      (d.conversation_id !== null &&
        result.ConversationID !== undefined &&
        result.ConversationID !== d.conversation_id)
    )
      throw new InvalidCallback('the result token does not belong to this disbursement')
    if (!OPEN.has(d.status)) return { ResultCode: 0, ResultDesc: 'Accepted' }
    const timedOut = query.timeout === '1'
    const code = timedOut && result.ResultCode === undefined ? 1037 : Number(result.ResultCode)
    const desc = String(result.ResultDesc ?? (timedOut ? 'queue timeout' : ''))
    const params = ((result.ResultParameters as { ResultParameter?: unknown } | undefined)
      ?.ResultParameter ?? []) as Array<{ Key?: string; Value?: unknown }>
    const param = (k: string) =>
      (Array.isArray(params) ? params : [params]).find((i) => i?.Key === k)?.Value
    const receipt = (param('TransactionReceipt') ?? result.TransactionID ?? null) as string | null
    const publicName = param('ReceiverPartyPublicName')
    const receiverName =
      typeof publicName === 'string' ? publicName.split(' - ').slice(1).join(' - ') || null : null
    await grouped(db, () => {
      const cur = getDisbursement(db, tid, ref)!
      if (!OPEN.has(cur.status)) return false
      const st = Number.isInteger(code) ? statusOfResult(code) : 'failed'
      const at = nowIso()
      const txnId = st === 'success' ? newId('txn') : null
      db.sqlite
        .query(
          `UPDATE disbursements SET status = ?, result_code = ?, result_desc = ?, transaction_receipt = ?,
            receiver_name = ?, transaction_id = ?, updated_at = ? WHERE id = ?`,
        )
        .run(
          st,
          Number.isInteger(code) ? code : null,
          desc,
          st === 'success' ? receipt : null,
          receiverName,
          txnId,
          at,
          ref,
        )
      appendAudit(db, {
        tenantId: tid,
        entity: 'disbursement',
        entityId: ref,
        action: 'settled',
        fromStatus: cur.status,
        toStatus: st,
        detail: { result_code: code, result_desc: desc, transaction_receipt: receipt },
        actor: null,
        at,
      })
      if (st === 'success') {
        const data: TransactionEvent = {
          transaction_id: txnId!,
          occurred_at: at,
          amount: toMajor(cur.amount_cents),
          direction: 'out',
          counterparty_name: receiverName,
          counterparty_phone: cur.phone_number,
          description: `M-Pesa disbursement ${cur.remarks}`,
          receipt_number: receipt,
          balance: null,
          source: 'payment',
          user_id: cur.user_id,
          account_reference: cur.occasion ?? cur.remarks.slice(0, 12),
        }
        emitEvent(db, { topic: topics.transactionsSuccess, tenantId: tid, data }, ctx.clock)
      } else {
        const data: PaymentFailedEvent = {
          checkout_request_id: cur.id,
          status: st,
          result_code: Number.isInteger(code) ? code : null,
          result_desc: desc,
          amount: toMajor(cur.amount_cents),
          phone_number: cur.phone_number,
          account_reference: cur.occasion ?? cur.remarks.slice(0, 12),
        }
        emitEvent(db, { topic: topics.transactionsFailed, tenantId: tid, data }, ctx.clock)
      }
      return true
    })
    return { ResultCode: 0, ResultDesc: 'Accepted' }
  }

  function b2cStatus(actor: Actor, id: string) {
    let tid = actor.tenantId
    if (isOperator(actor)) {
      const row = platform()
        .sqlite.query<{ tenant_id: string }, [string]>(
          'SELECT tenant_id FROM payment_index WHERE ref = ?',
        )
        .get(id)
      if (row) tid = row.tenant_id
    }
    const d = getDisbursement(tenantDb(tid), tid, id)
    if (!d) throw new NotFound('disbursement', id)
    return disbursementView(d)
  }

  // --- reconciliation -------------------------------------------------------------------------

  let reconciling: Promise<ReconcileReport> | null = null

  /** Settles STK payments pending longer than `mpesa.reconcile_after_s` by asking the provider. */
  function reconcile(opts: { olderThanS?: number } = {}): Promise<ReconcileReport> {
    reconciling ??= runReconcile(opts.olderThanS ?? cfg.reconcileAfterS).finally(() => {
      reconciling = null
    })
    return reconciling
  }

  async function runReconcile(olderThanS: number): Promise<ReconcileReport> {
    const report: ReconcileReport = { checked: 0, settled: 0, still_pending: 0, failed_to_query: 0 }
    const cutoff = new Date(ctx.clock.nowMs() - olderThanS * 1000).toISOString()
    const rows = platform()
      .sqlite.query<{ ref: string; kind: string; tenant_id: string; created_at: string }, [string]>(
        'SELECT ref, kind, tenant_id, created_at FROM payment_index WHERE open = 1 AND created_at <= ? ORDER BY created_at LIMIT 1000',
      )
      .all(cutoff)
    const closed: string[] = []
    for (const row of rows) {
      if (inflight.has(row.ref)) continue
      report.checked++
      const db = tenantDb(row.tenant_id)
      if (row.kind === 'b2c') {
        // B2C has no synchronous status query here: its result callback settles it.
        const d = getDisbursement(db, row.tenant_id, row.ref)
        report.checked--
        if (!d || !OPEN.has(d.status)) closed.push(row.ref)
        continue
      }
      const p = getPayment(db, row.tenant_id, row.ref)
      if (!p || !OPEN.has(p.status)) {
        closed.push(row.ref)
        report.checked--
        continue
      }
      if (p.status === 'initiating') {
        // Accepted by nobody (the process died mid-call): it never reached the customer's phone.
        const stale = new Date(ctx.clock.nowMs() - (olderThanS + 60) * 1000).toISOString()
        if (p.created_at <= stale) {
          await settle(
            db,
            row.tenant_id,
            p.id,
            -1,
            'the provider never acknowledged the request',
            null,
            'reconcile',
          )
          report.settled++
          closed.push(row.ref)
        } else report.still_pending++
        continue
      }
      let meta: SuccessMeta | null = null
      if (p.callback_body) {
        try {
          const cb = JSON.parse(p.callback_body) as {
            Body?: { stkCallback?: { CallbackMetadata?: { Item?: unknown } } }
          }
          meta = metaOf(cb.Body?.stkCallback?.CallbackMetadata?.Item)
        } catch {}
      }
      try {
        const r = await confirmByQuery(db, row.tenant_id, p, meta, 'reconcile')
        if (r === 'settled') {
          report.settled++
          closed.push(row.ref)
        } else report.still_pending++
      } catch (err) {
        report.failed_to_query++
        ctx.log.warn('reconciliation could not query a payment', {
          payment: p.id,
          error: (err as Error).message,
        })
      }
    }
    closeIndex(closed)
    if (report.checked) ctx.log.info('reconciliation ran', { ...report })
    return report
  }

  return {
    settings: cfg,
    provider,
    stkPush,
    stkCallback,
    status,
    list,
    b2cPay,
    b2cResult,
    b2cStatus,
    reconcile,
    callbackUrl,
  }
}

export type Payments = ReturnType<typeof createPayments>
