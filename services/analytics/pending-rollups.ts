import type { Db } from '../kernel/db.ts'
import { preparedPerDb } from '../kernel/prepared.ts'
import { addToCategoryCell, addToDayCell, counterpartyUpsert, statementsOf } from './rollups.ts'
import { isTradingParty, normalizePhone, type StoredTransaction, UNCATEGORIZED } from './stored.ts'

/**
 * The rollup increments of a batch's new transactions, summed in memory and written once per
 * rollup row when flushed: a 1,000-row message touches a few day and category cells, so this
 * saves most of the per-row upserts of the insert path. Only additions are held; whatever else
 * touches the rollups (an update, a dropped copy) flushes first, so the rows come out as if each
 * transaction had been added on its own.
 */
export interface PendingRollups {
  /** Counts a newly inserted transaction. */
  add(row: StoredTransaction): void
  /** Writes what was counted (call inside the batch's write transaction). */
  flush(): void
}

interface Day {
  row: StoredTransaction
  inCount: number
  inCents: number
  outCount: number
  outCents: number
}
interface Cell {
  row: StoredTransaction
  count: number
  cents: number
  lastSeen: string
}
interface Party {
  row: StoredTransaction
  name: string | null
  phone: string | null
  count: number
  total: number
  inCents: number
  outCents: number
  firstSeen: string
  lastSeen: string
}

const SEP = '\u001f'

/**
 * The counterparty upsert (rollups.ts) for a sum of named rows: when the stored row is later than all of them its
 * name stays, or, had it none, takes the first row's name, as adding them one by one would.
 */
const PARTY_SQL = counterpartyUpsert('?11')
const partyStatementOf = preparedPerDb({ party: PARTY_SQL })

export function pendingRollups(db: Db): PendingRollups {
  const st = statementsOf(db)
  const partySql = partyStatementOf(db).party
  const days = new Map<string, Day>()
  const cells = new Map<string, Cell>()
  const dayParties = new Map<string, Cell>()
  const parties = new Map<string, Party>()

  const writeParty = (p: Party) =>
    partySql.run(
      p.row.tenant_id,
      p.row.counterparty_key,
      p.name,
      p.phone,
      p.count,
      p.total,
      p.inCents,
      p.outCents,
      p.firstSeen,
      p.lastSeen,
      p.row.counterparty_name,
    )

  return {
    add(r) {
      const user = r.user_id ?? ''
      const cents = r.amount_cents
      const isIn = r.direction === 'in'
      const kind = r.kind ?? ''
      const dayKey = r.tenant_id + SEP + r.local_day + SEP + user + SEP + kind
      const day = days.get(dayKey)
      if (day) {
        if (isIn) {
          day.inCount++
          day.inCents += cents
        } else {
          day.outCount++
          day.outCents += cents
        }
      } else {
        days.set(dayKey, {
          row: r,
          inCount: isIn ? 1 : 0,
          inCents: isIn ? cents : 0,
          outCount: isIn ? 0 : 1,
          outCents: isIn ? 0 : cents,
        })
      }
      const cellKey = `${dayKey}${SEP}${r.direction}${SEP}${r.category ?? UNCATEGORIZED}`
      const cell = cells.get(cellKey)
      if (cell) {
        cell.count++
        cell.cents += cents
      } else cells.set(cellKey, { row: r, count: 1, cents, lastSeen: r.occurred_at })
      const key = r.counterparty_key
      if (!key || !isTradingParty(r.kind)) return
      const dpKey = r.tenant_id + SEP + r.local_day + SEP + key + SEP + r.direction
      const dp = dayParties.get(dpKey)
      if (dp) {
        dp.count++
        dp.cents += cents
        if (r.occurred_at > dp.lastSeen) dp.lastSeen = r.occurred_at
      } else dayParties.set(dpKey, { row: r, count: 1, cents, lastSeen: r.occurred_at })
      const partyKey = r.tenant_id + SEP + key
      const name = r.counterparty_name
      const phone = normalizePhone(r.counterparty_phone)
      const p = parties.get(partyKey)
      // The stored name follows the latest report that has one (CP_SQL). Summing two named rows
      // gives the same answer as adding them one by one; a nameless row does not (its turn decides
      // which name survives), so the sum so far is written first.
      if (p && name !== null && p.name !== null) {
        if (r.occurred_at >= p.lastSeen) {
          p.name = name
          p.lastSeen = r.occurred_at
        }
        p.phone ??= phone
        p.count++
        p.total += cents
        if (isIn) p.inCents += cents
        else p.outCents += cents
        if (r.occurred_at < p.firstSeen) p.firstSeen = r.occurred_at
        return
      }
      if (p) writeParty(p)
      parties.set(partyKey, {
        row: r,
        name,
        phone,
        count: 1,
        total: cents,
        inCents: isIn ? cents : 0,
        outCents: isIn ? 0 : cents,
        firstSeen: r.occurred_at,
        lastSeen: r.occurred_at,
      })
    },
    flush() {
      for (const d of days.values()) addToDayCell(st, d.row, d)
      for (const c of cells.values()) {
        const r = c.row
        addToCategoryCell(st, r, c.count, c.cents)
      }
      for (const c of dayParties.values()) {
        const r = c.row
        st.dailyCp.run(
          r.tenant_id,
          r.local_day,
          r.counterparty_key,
          r.direction,
          c.count,
          c.cents,
          c.lastSeen,
        )
      }
      for (const p of parties.values()) writeParty(p)
      days.clear()
      cells.clear()
      dayParties.clear()
      parties.clear()
    },
  }
}
