import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { outbox } from '../../schema/kernel.ts'
import { hasOutbox } from '../../tenants/move-tables.ts'
import { sqlNames } from './columns.ts'
import type { ServiceContext } from './context.ts'
import type { Db } from './db.ts'

/** What to publish again: a tenant's events or every tenant's, of some topics or all, since a time. */
export interface RepublishAsk {
  since: string
  tenant?: string | undefined
  topics?: readonly string[] | undefined
}

/** A part's outboxes and where to publish: a service's context, or the CLI's own. */
export type Outboxes = Pick<ServiceContext<unknown>, 'registry' | 'bus' | 'name'>

/**
 * Publishes again, in order, the events this part wrote since a time, from its outboxes (the
 * platform file and the tenants' files); consumers drop the ones they applied already (inbox).
 * Asked after a tenant moved between instances (one tenant), by a consumer whose broker session
 * was lost while it was away (its topics, every tenant) and by `mmp replay events`. Returns how
 * many went.
 */
const o = sqlNames(outbox)

export async function republish(ctx: Outboxes, ask: RepublishAsk): Promise<number> {
  const topics = ask.topics ? JSON.stringify(ask.topics) : null
  let n = 0
  for (const db of outboxesSince(ctx, ask)) {
    if (!hasOutbox(db.sqlite)) continue
    const rows = db.sqlite
      .query<{ topic: string; payload: string }, [string, string | null, string | null]>(
        `SELECT ${o.topic} AS topic, ${o.payload} AS payload FROM ${o.$}
         WHERE ${o.createdAt} >= ?1
           AND (?2 IS NULL OR ${o.tenantId} = ?2)
           AND (?3 IS NULL OR ${o.topic} IN (SELECT value FROM json_each(?3)))
         ORDER BY ${o.seq}`,
      )
      .all(ask.since, ask.tenant ?? null, topics)
    for (const row of rows) {
      await ctx.bus.publish(row.topic, JSON.parse(row.payload))
      n++
    }
  }
  return n
}

/**
 * The databases that may hold such events. Every tenant's: only the files written since `since`
 * (a file and its WAL untouched since then hold no newer event), so a part with many tenants
 * opens only the ones that were busy.
 */
function outboxesSince(ctx: Outboxes, ask: RepublishAsk): Db[] {
  const out: Db[] = []
  if (existsSync(join(ctx.registry.dataDir, 'platform', `${ctx.name}.db`)))
    out.push(ctx.registry.platform(ctx.name))
  if (ask.tenant !== undefined) {
    if (
      ctx.registry.hasProfile(ask.tenant) &&
      existsSync(ctx.registry.pathOf(ctx.name, ask.tenant))
    )
      out.push(ctx.registry.tenant(ctx.name, ask.tenant))
    return out
  }
  const since = Date.parse(ask.since)
  const touched = (file: string) => {
    for (const f of [file, `${file}-wal`]) {
      try {
        if (statSync(f).mtimeMs >= since - 1000) return true
      } catch {}
    }
    return false
  }
  for (const file of ctx.registry.existingTenantDatabases(ctx.name))
    if (touched(file)) out.push(ctx.registry.openPath(ctx.name, file, null))
  return out
}
