import type { c2bShortcodes } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { AppError, Conflict, IdempotencyInProgress, NotFound } from '../kernel/errors.ts'
import { shownOnceNotice } from '../kernel/idempotency.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import type { CredentialBox } from './c2b-secrets.ts'
import type { CallbackAuth } from './callback-auth.ts'
import type { PaymentDeps } from './deps.ts'
import {
  claimKey,
  decideKey,
  markReplayed,
  readKey,
  releaseKey,
  requestHash,
  storeAnswer,
} from './idempotency.ts'
import type { Narrow, SqlRow } from './sql-row.ts'

/**
 * C2B shortcodes (tills and paybills) in the platform database: which tenant holds each, and
 * whether it is an aggregator paybill (registered by the operator for the platform: a customer's
 * account number names the tenant).
 */
export type ShortcodeRow = Narrow<
  SqlRow<typeof c2bShortcodes>,
  {
    mode: 'tenant' | 'aggregator'
    response_type: 'Completed' | 'Cancelled'
    status: 'pending' | 'registered' | 'released'
  }
>

export interface RegisterBody {
  tenant_id?: string | undefined
  shortcode: string
  response_type: 'Completed' | 'Cancelled'
  initiator_name?: string | undefined
  security_credential?: string | undefined
}

/**
 * How a shortcode's confirmations are verified: 'query' (a Transaction Status query with its own
 * initiator, or the platform's on an aggregator paybill and on the simulator, which like Daraja's
 * sandbox answers the platform's initiator for any shortcode) or 'source' (none to query with:
 * only from Safaricom's addresses, and marked unverified).
 */
export const verificationOf = (
  r: Pick<ShortcodeRow, 'mode' | 'initiator_name'>,
  usingSimulator: boolean,
) =>
  r.mode === 'aggregator' || r.initiator_name || usingSimulator
    ? ('query' as const)
    : ('source' as const)

const newNonce = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex')

const ROUTE = 'c2b/register'
const SHORTCODE = /^\d{5,7}$/

export const getShortcode = (platform: Db, shortcode: string) =>
  platform.sqlite
    .query<ShortcodeRow, [string]>('SELECT * FROM c2b_shortcodes WHERE shortcode = ?')
    .get(shortcode)

/** The answer's fields that carry the URL tokens: shown once, never kept for a replay. */
const URL_FIELDS = ['confirmation_url', 'validation_url'] as const

export function createShortcodes(deps: PaymentDeps, auth: CallbackAuth, box: CredentialBox) {
  const registering = new Set<string>()

  /** The URLs carry the tokens: shown once, to the Admin who registered or rotated them. */
  const urlsOf = (r: ShortcodeRow) => ({
    confirmation_url: auth.c2bUrl('confirmation', r.tenant_id, r.shortcode, r.token_nonce),
    validation_url: auth.c2bUrl('validation', r.tenant_id, r.shortcode, r.token_nonce),
  })

  /** Registers a shortcode's URLs, with their tokens, with the provider. */
  const registerUrls = (r: ShortcodeRow, responseType: ShortcodeRow['response_type']) => {
    const urls = urlsOf(r)
    return deps.business.registerC2bUrls({
      shortcode: r.shortcode,
      responseType,
      confirmationUrl: urls.confirmation_url,
      validationUrl: urls.validation_url,
    })
  }

  const view = (r: ShortcodeRow) => ({
    shortcode: r.shortcode,
    tenant_id: r.tenant_id,
    mode: r.mode,
    response_type: r.response_type,
    status: r.status === 'released' ? ('released' as const) : ('registered' as const),
    verification: verificationOf(r, deps.cfg.usingSimulator),
    initiator_name: r.initiator_name,
    registered_at: r.registered_at,
    released_at: r.released_at,
  })

  /**
   * Claims the shortcode for `tid` before the provider is called, so two tenants racing for one
   * shortcode cannot both register it: 409 when another tenant holds it (registered, or being
   * registered). Returns the row it replaced, to restore when the provider refuses.
   */
  function claim(row: ShortcodeRow): ShortcodeRow | null {
    const platform = deps.platform()
    return platform.write(() => {
      const before = getShortcode(platform, row.shortcode) ?? null
      if (before && before.status !== 'released' && before.tenant_id !== row.tenant_id)
        throw new Conflict(`shortcode ${row.shortcode} is registered to another tenant`)
      platform.sqlite
        .query(
          `INSERT OR REPLACE INTO c2b_shortcodes (shortcode, tenant_id, mode, response_type, status,
            registered_at, released_at, token_nonce, initiator_name, security_credential)
           VALUES (?, ?, ?, ?, 'pending', ?, NULL, ?, ?, ?)`,
        )
        .run(
          row.shortcode,
          row.tenant_id,
          row.mode,
          row.response_type,
          row.registered_at,
          row.token_nonce,
          row.initiator_name,
          row.security_credential,
        )
      return before
    })
  }

  function restore(shortcode: string, before: ShortcodeRow | null) {
    const platform = deps.platform()
    platform.write(() => {
      platform.sqlite.query('DELETE FROM c2b_shortcodes WHERE shortcode = ?').run(shortcode)
      if (before)
        platform.sqlite
          .query(
            `INSERT INTO c2b_shortcodes (shortcode, tenant_id, mode, response_type, status,
              registered_at, released_at, token_nonce, initiator_name, security_credential)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            before.shortcode,
            before.tenant_id,
            before.mode,
            before.response_type,
            before.status,
            before.registered_at,
            before.released_at,
            before.token_nonce,
            before.initiator_name,
            before.security_credential,
          )
    })
  }

  /** The registration a key was bound to, as answered; null when the key is free. */
  function knownKey(
    db: Db,
    tid: string,
    key: string,
    hash: string,
  ): ReturnType<typeof view> | null {
    const row = readKey(db, tid, ROUTE, key, deps.ctx.clock.nowMs())
    const d = decideKey(row, hash, row ? registering.has(`${tid}:${row.ref}`) : false)
    if (d.action === 'new') return null
    if (d.action === 'replay') return d.body as ReturnType<typeof view>
    if (d.action === 'in_progress') throw new IdempotencyInProgress(1)
    const current = getShortcode(deps.platform(), d.ref)
    if (!current || current.tenant_id !== tid || current.status === 'pending')
      throw new IdempotencyInProgress(1)
    return markReplayed({ ...view(current), shown_once: shownOnceNotice(URL_FIELDS) })
  }

  /**
   * Registers the platform's confirmation and validation URLs for a shortcode with the provider.
   * The operator registering without naming a tenant registers an aggregator paybill.
   */
  async function register(
    actor: Actor,
    body: RegisterBody,
    key: string | null,
    entitle: () => void,
  ) {
    const aggregator = isOperator(actor) && !body.tenant_id
    const tid = aggregator ? PLATFORM_TENANT : tenantFor(actor, body.tenant_id)
    const shortcode = String(body.shortcode ?? '').trim()
    if (!SHORTCODE.test(shortcode))
      throw new AppError('VALIDATION_FAILED', 'shortcode: must be a paybill or till number', {
        errors: [{ field: 'shortcode', message: 'must be 5 to 7 digits' }],
      })
    const initiator = body.initiator_name?.trim() || null
    const credential = body.security_credential?.trim() || null
    if (!initiator !== !credential)
      throw new AppError(
        'VALIDATION_FAILED',
        'initiator_name and security_credential: give both or neither',
        {
          errors: [
            {
              field: initiator ? 'security_credential' : 'initiator_name',
              message: 'required with the other',
            },
          ],
        },
      )
    const db = deps.tenantDb(tid)
    const hash = requestHash({
      shortcode,
      response_type: body.response_type,
      tenant_id: tid,
      initiator,
      credential,
    })
    if (key) {
      const known = knownKey(db, tid, key, hash)
      if (known) return known
    }
    entitle()
    const at = deps.nowIso()
    if (key) {
      const claimed = db.write(() =>
        claimKey(db, { tid, route: ROUTE, key, hash, ref: shortcode, at }),
      )
      if (!claimed) {
        const known = knownKey(db, tid, key, hash)
        if (known) return known
        throw new IdempotencyInProgress(1)
      }
    }
    const row: ShortcodeRow = {
      shortcode,
      tenant_id: tid,
      mode: aggregator ? 'aggregator' : 'tenant',
      response_type: body.response_type,
      status: 'registered',
      registered_at: at,
      released_at: null,
      token_nonce: newNonce(),
      initiator_name: initiator,
      security_credential: credential ? box.seal(credential) : null,
    }
    let before: ShortcodeRow | null
    try {
      before = claim(row)
    } catch (err) {
      if (key) db.write(() => releaseKey(db, tid, ROUTE, key))
      throw err
    }
    registering.add(`${tid}:${shortcode}`)
    try {
      await registerUrls(row, body.response_type)
    } catch (err) {
      restore(shortcode, before)
      if (key) db.write(() => releaseKey(db, tid, ROUTE, key))
      throw new AppError(
        'BAD_GATEWAY',
        `the payment provider did not register the URLs: ${(err as Error).message}`,
      )
    } finally {
      registering.delete(`${tid}:${shortcode}`)
    }
    const platform = deps.platform()
    platform.write(() =>
      platform.sqlite
        .query("UPDATE c2b_shortcodes SET status = 'registered' WHERE shortcode = ?")
        .run(shortcode),
    )
    const answer = { ...view(row), ...urlsOf(row) }
    db.write(() => {
      appendAudit(db, {
        tenantId: tid,
        entity: 'c2b_shortcode',
        entityId: shortcode,
        action: 'registered',
        fromStatus: before?.tenant_id === tid ? before.status : null,
        toStatus: 'registered',
        detail: {
          shortcode,
          mode: row.mode,
          response_type: row.response_type,
          verification: verificationOf(row, deps.cfg.usingSimulator),
        },
        actor: actor.userId,
        at,
      })
      if (key)
        storeAnswer(db, tid, ROUTE, key, { ...view(row), shown_once: shownOnceNotice(URL_FIELDS) })
    })
    return answer
  }

  /** The shortcodes a tenant holds (the operator: the platform's aggregator paybills). */
  function list(actor: Actor, named?: string) {
    const tid = tenantFor(actor, named)
    const rows = deps
      .platform()
      .sqlite.query<ShortcodeRow, [string]>(
        "SELECT * FROM c2b_shortcodes WHERE tenant_id = ? AND status = 'registered' ORDER BY shortcode",
      )
      .all(tid)
    return { data: rows.map(view) }
  }

  /**
   * Stops holding a shortcode, so another tenant may register it. Daraja has no call to remove
   * registered URLs: until someone registers new ones, confirmations still arrive and are still
   * recorded for the tenant that held it (the money did move).
   */
  function release(actor: Actor, shortcode: string) {
    const platform = deps.platform()
    const row = getShortcode(platform, shortcode)
    if (
      !row ||
      row.status !== 'registered' ||
      (row.tenant_id !== actor.tenantId && !isOperator(actor))
    )
      throw new NotFound('shortcode', shortcode)
    const at = deps.nowIso()
    platform.write(() =>
      platform.sqlite
        .query(
          "UPDATE c2b_shortcodes SET status = 'released', released_at = ? WHERE shortcode = ? AND status = 'registered'",
        )
        .run(at, shortcode),
    )
    const db = deps.tenantDb(row.tenant_id)
    db.write(() =>
      appendAudit(db, {
        tenantId: row.tenant_id,
        entity: 'c2b_shortcode',
        entityId: shortcode,
        action: 'released',
        fromStatus: 'registered',
        toStatus: 'released',
        detail: { shortcode },
        actor: actor.userId,
        at,
      }),
    )
    return view({ ...row, status: 'released', released_at: at })
  }

  /**
   * New URL tokens for a shortcode: the provider is given the new URLs first, and only once it
   * took them do the old ones stop working. Production Daraja registers URLs once: delete them
   * under URL management on the M-Pesa portal first, or the provider refuses (502, old URLs kept).
   */
  async function rotate(actor: Actor, shortcode: string) {
    const row = getShortcode(deps.platform(), shortcode)
    if (
      !row ||
      row.status !== 'registered' ||
      (row.tenant_id !== actor.tenantId && !isOperator(actor))
    )
      throw new NotFound('shortcode', shortcode)
    const next = { ...row, token_nonce: newNonce() }
    try {
      await registerUrls(next, row.response_type)
    } catch (err) {
      throw new AppError(
        'BAD_GATEWAY',
        `the payment provider did not take the new URLs, so the old ones still work (on production Daraja, delete the registered URLs under URL management on the M-Pesa portal, then rotate again): ${(err as Error).message}`,
      )
    }
    const platform = deps.platform()
    platform.write(() =>
      platform.sqlite
        .query('UPDATE c2b_shortcodes SET token_nonce = ? WHERE shortcode = ?')
        .run(next.token_nonce, shortcode),
    )
    const db = deps.tenantDb(row.tenant_id)
    db.write(() =>
      appendAudit(db, {
        tenantId: row.tenant_id,
        entity: 'c2b_shortcode',
        entityId: shortcode,
        action: 'rotated',
        fromStatus: 'registered',
        toStatus: 'registered',
        detail: { shortcode },
        actor: actor.userId,
        at: deps.nowIso(),
      }),
    )
    return { ...view(next), ...urlsOf(next) }
  }

  return { register, list, release, rotate }
}

export type Shortcodes = ReturnType<typeof createShortcodes>
