import { and, asc, eq } from 'drizzle-orm'
import { c2bShortcodes } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { AppError, IdempotencyInProgress } from '../kernel/errors.ts'
import { shownOnceNotice } from '../kernel/idempotency.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import type { CredentialBox } from './c2b-secrets.ts'
import {
  auditShortcode,
  claimShortcode,
  getShortcode,
  heldShortcode,
  restoreShortcode,
  type ShortcodeRow,
  shortcodeView,
  verificationOf,
} from './c2b-shortcode-store.ts'
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

const t = c2bShortcodes

export interface RegisterBody {
  tenant_id?: string | undefined
  shortcode: string
  response_type: 'Completed' | 'Cancelled'
  initiator_name?: string | undefined
  security_credential?: string | undefined
}

const newNonce = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex')

const ROUTE = 'c2b/register'
const SHORTCODE = /^\d{5,7}$/

/** The answer's fields that carry the URL tokens: shown once, never kept for a replay. */
const URL_FIELDS = ['confirmation_url', 'validation_url'] as const

/** A registration's fields, checked: whose it is, the shortcode, the initiator (both or none). */
function readRegistration(actor: Actor, body: RegisterBody) {
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
  return { aggregator, tid, shortcode, initiator, credential }
}

/**
 * Once the provider took the URLs: the shortcode is registered, the holder's audit row written,
 * and the answer kept for a replay of the key (without the URLs, shown once).
 */
function markRegistered(
  deps: PaymentDeps,
  done: {
    row: ShortcodeRow
    before: ShortcodeRow | null
    key: string | null
    actorId: string | null
  },
) {
  const { row, before, key } = done
  const tid = row.tenantId
  const platform = deps.platform()
  platform.write((orm) =>
    orm.update(t).set({ status: 'registered' }).where(eq(t.shortcode, row.shortcode)).run(),
  )
  const db = deps.tenantDb(tid)
  db.write(() => {
    appendAudit(db, {
      tenantId: tid,
      entity: 'c2b_shortcode',
      entityId: row.shortcode,
      action: 'registered',
      fromStatus: before?.tenantId === tid ? before.status : null,
      toStatus: 'registered',
      detail: {
        shortcode: row.shortcode,
        mode: row.mode,
        response_type: row.responseType,
        verification: verificationOf(row, deps.cfg.usingSimulator),
      },
      actor: done.actorId,
      at: row.registeredAt,
    })
    if (key)
      storeAnswer(
        db,
        { tid, route: ROUTE, key },
        {
          ...shortcodeView(deps.cfg, row),
          shown_once: shownOnceNotice(URL_FIELDS),
        },
      )
  })
}

/** The registration a key was bound to, as answered; null when the key is free. */
function knownRegistration(
  deps: PaymentDeps,
  registering: ReadonlySet<string>,
  k: { db: Db; tid: string; key: string; hash: string },
): ReturnType<typeof shortcodeView> | null {
  const { tid } = k
  const row = readKey(k.db, { tid, route: ROUTE, key: k.key }, deps.ctx.clock.nowMs())
  const d = decideKey(row, k.hash, row ? registering.has(`${tid}:${row.ref}`) : false)
  if (d.action === 'new') return null
  if (d.action === 'replay') return d.body as ReturnType<typeof shortcodeView>
  if (d.action === 'in_progress') throw new IdempotencyInProgress(1)
  const current = getShortcode(deps.platform(), d.ref)
  if (!current || current.tenantId !== tid || current.status === 'pending')
    throw new IdempotencyInProgress(1)
  return markReplayed({
    ...shortcodeView(deps.cfg, current),
    shown_once: shownOnceNotice(URL_FIELDS),
  })
}

/** The URLs carry the tokens: shown once, to the Admin who registered or rotated them. */
const c2bUrls = (auth: CallbackAuth, r: ShortcodeRow) => ({
  confirmation_url: auth.c2bUrl('confirmation', r.tenantId, r.shortcode, r.tokenNonce),
  validation_url: auth.c2bUrl('validation', r.tenantId, r.shortcode, r.tokenNonce),
})

/** A shortcode's URLs, with their tokens, as the provider registers them. */
function registration(auth: CallbackAuth, r: ShortcodeRow) {
  const urls = c2bUrls(auth, r)
  return {
    shortcode: r.shortcode,
    confirmationUrl: urls.confirmation_url,
    validationUrl: urls.validation_url,
  }
}

export function createShortcodes(deps: PaymentDeps, auth: CallbackAuth, box: CredentialBox) {
  const registering = new Set<string>()

  const urlsOf = (r: ShortcodeRow) => c2bUrls(auth, r)
  const registerUrls = (r: ShortcodeRow, responseType: ShortcodeRow['responseType']) =>
    deps.business.registerC2bUrls({ ...registration(auth, r), responseType })
  const knownKey = (db: Db, tid: string, key: string, hash: string) =>
    knownRegistration(deps, registering, { db, tid, key, hash })

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
    const { aggregator, tid, shortcode, initiator, credential } = readRegistration(actor, body)
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
      tenantId: tid,
      mode: aggregator ? 'aggregator' : 'tenant',
      responseType: body.response_type,
      status: 'registered',
      registeredAt: at,
      releasedAt: null,
      tokenNonce: newNonce(),
      initiatorName: initiator,
      securityCredential: credential ? box.seal(credential) : null,
    }
    let before: ShortcodeRow | null
    try {
      before = claimShortcode(deps, row)
    } catch (err) {
      if (key) db.write(() => releaseKey(db, { tid, route: ROUTE, key }))
      throw err
    }
    registering.add(`${tid}:${shortcode}`)
    try {
      await registerUrls(row, body.response_type)
    } catch (err) {
      restoreShortcode(deps, shortcode, before)
      if (key) db.write(() => releaseKey(db, { tid, route: ROUTE, key }))
      throw new AppError(
        'BAD_GATEWAY',
        `the payment provider did not register the URLs: ${(err as Error).message}`,
      )
    } finally {
      registering.delete(`${tid}:${shortcode}`)
    }
    markRegistered(deps, { row, before, key, actorId: actor.userId })
    return { ...shortcodeView(deps.cfg, row), ...urlsOf(row) }
  }

  /** The shortcodes a tenant holds (the operator: the platform's aggregator paybills). */
  function list(actor: Actor, named?: string) {
    const tid = tenantFor(actor, named)
    const rows = deps
      .platform()
      .orm.select()
      .from(t)
      .where(and(eq(t.tenantId, tid), eq(t.status, 'registered')))
      .orderBy(asc(t.shortcode))
      .all() as ShortcodeRow[]
    return { data: rows.map((r) => shortcodeView(deps.cfg, r)) }
  }

  /**
   * Stops holding a shortcode, so another tenant may register it. Daraja has no call to remove
   * registered URLs: until someone registers new ones, confirmations still arrive and are still
   * recorded for the tenant that held it (the money did move).
   */
  function release(actor: Actor, shortcode: string) {
    const platform = deps.platform()
    const row = heldShortcode(deps, actor, shortcode)
    const at = deps.nowIso()
    platform.write((orm) =>
      orm
        .update(t)
        .set({ status: 'released', releasedAt: at })
        .where(and(eq(t.shortcode, shortcode), eq(t.status, 'registered')))
        .run(),
    )
    auditShortcode(deps, { row, action: 'released', actor: actor.userId, at })
    return shortcodeView(deps.cfg, { ...row, status: 'released', releasedAt: at })
  }

  /**
   * New URL tokens for a shortcode: the provider is given the new URLs first, and only once it
   * took them do the old ones stop working. Production Daraja registers URLs once: delete them
   * under URL management on the M-Pesa portal first, or the provider refuses (502, old URLs kept).
   */
  async function rotate(actor: Actor, shortcode: string) {
    const row = heldShortcode(deps, actor, shortcode)
    const next = { ...row, tokenNonce: newNonce() }
    try {
      await registerUrls(next, row.responseType)
    } catch (err) {
      throw new AppError(
        'BAD_GATEWAY',
        `the payment provider did not take the new URLs, so the old ones still work (on production Daraja, delete the registered URLs under URL management on the M-Pesa portal, then rotate again): ${(err as Error).message}`,
      )
    }
    const platform = deps.platform()
    platform.write((orm) =>
      orm.update(t).set({ tokenNonce: next.tokenNonce }).where(eq(t.shortcode, shortcode)).run(),
    )
    auditShortcode(deps, { row, action: 'rotated', actor: actor.userId, at: deps.nowIso() })
    return { ...shortcodeView(deps.cfg, next), ...urlsOf(next) }
  }

  return { register, list, release, rotate }
}
