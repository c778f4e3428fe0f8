/**
 * A statement proves itself (DESIGN §16): the rows a reader keeps must reproduce the file's own
 * totals (its SUMMARY / TOTAL table, or an org statement's opening and closing balance and totals)
 * and its running balance, row by row. The reader notes every row it reads here, in file order;
 * `verdict` then says whether the file adds up and, where it does not, between which rows the
 * money went missing. Amounts are cents.
 */

/** What the file itself says its rows add up to (any part may be missing). */
export interface FileTotals {
  paidIn?: number
  paidOut?: number
  opening?: number
  closing?: number
}

/** One place where the running balance does not follow from the row before it. */
export interface BalanceBreak {
  /** Row numbers of the two rows, older first. */
  rows: [number, number]
  /** Their Completion Times as the file prints them, older first. */
  between: [string, string]
  /** The balance the older row and the newer row's amount give, and the one the file prints. */
  expected: number
  found: number
  /** found − expected: money the file's rows do not account for (+ in, − out). */
  missing: number
}

export interface ProofVerdict {
  /** The file's own totals as read, or null when the file states none. */
  file: FileTotals | null
  /** What the kept rows add up to: completed rows, and every row with an amount. */
  rows: { paidIn: number; paidOut: number; paidInAll: number; paidOutAll: number }
  /** Totals: true they match, false they do not, null the file states none. */
  totalsMatch: boolean | null
  /** The running balance: true it chains, false it breaks, null the file has no Balance column. */
  balanceChains: boolean | null
  /** Breaks of the running balance, at most MAX_BREAKS of them; `breakCount` counts them all. */
  breaks: BalanceBreak[]
  breakCount: number
  /** The balance before the first row and after the last, as the file prints them. */
  opening: number | null
  closing: number | null
}

const MAX_BREAKS = 50

/**
 * The same text in a string of its own. A cell's text is cut out of the piece of the file it was
 * read from, and the engine keeps that whole piece alive for as long as the cut is kept: the
 * times the proof keeps for every row held every piece of the file until the end of the read (62
 * MB for a 100,000-row XLSX, whose pieces are 1 MB of unpacked XML). A join writes new text.
 */
const detached = (text: string): string => [text, ''].join('')

export class StatementProof {
  private file: FileTotals | null = null
  // One array of numbers a field: 100,000 rows are four arrays, not 100,000 objects.
  private readonly at: number[] = []
  private readonly moves: number[] = []
  private readonly balances: number[] = []
  private readonly rowNos: number[] = []
  private readonly times: string[] = []
  private paidIn = 0
  private paidOut = 0
  private paidInAll = 0
  private paidOutAll = 0
  private withBalance = 0

  /** The totals the file states; later calls fill what earlier ones did not. */
  setTotals(t: FileTotals): void {
    this.file = { ...t, ...stripUndefined(this.file ?? {}) }
  }

  /**
   * A row of the table: its instant (ms, NaN when unreadable), the money it moved in and out,
   * the balance it prints (NaN for none), whether it completed (a cancelled row moves nothing).
   */
  note(
    row: number,
    time: string,
    ms: number,
    inCents: number,
    outCents: number,
    balance: number,
    done: boolean,
  ) {
    this.paidInAll += inCents
    this.paidOutAll += outCents
    if (done) {
      this.paidIn += inCents
      this.paidOut += outCents
    }
    // A row without a readable time (rejected) has no place in the running balance's order.
    if (Number.isNaN(ms)) return
    this.at.push(ms)
    this.moves.push(done ? inCents - outCents : 0)
    this.balances.push(balance)
    this.rowNos.push(row)
    this.times.push(detached(time))
    if (!Number.isNaN(balance)) this.withBalance++
  }

  verdict(): ProofVerdict {
    const file = this.file && Object.keys(this.file).length > 0 ? this.file : null
    const chain = this.chain()
    const rows = {
      paidIn: this.paidIn,
      paidOut: this.paidOut,
      paidInAll: this.paidInAll,
      paidOutAll: this.paidOutAll,
    }
    return {
      file,
      rows,
      totalsMatch: file ? totalsMatch(file, rows, chain) : null,
      balanceChains: chain ? chain.breakCount === 0 : null,
      breaks: chain?.breaks ?? [],
      breakCount: chain?.breakCount ?? 0,
      opening: chain?.opening ?? null,
      closing: chain?.closing ?? null,
    }
  }

  /**
   * Walks the rows oldest first (a personal statement lists the newest first: the order is read
   * from the times) and checks each balance against the one before plus the row's move. Rows of
   * the same second are taken as a group, in any order: M-Pesa books a Fuliza-funded payment's
   * rows in one second and prints them in an order that is not always the booking order.
   */
  private chain(): {
    breaks: BalanceBreak[]
    breakCount: number
    opening: number
    closing: number
  } | null {
    const n = this.at.length
    if (n === 0 || this.withBalance < Math.max(1, n / 2)) return null
    const at = this.at
    let first = Number.NaN
    let last = Number.NaN
    for (let i = 0; i < n && Number.isNaN(first); i++) if (!Number.isNaN(at[i]!)) first = at[i]!
    for (let i = n - 1; i >= 0 && Number.isNaN(last); i--) if (!Number.isNaN(at[i]!)) last = at[i]!
    const newestFirst = first > last
    const order = Array.from({ length: n }, (_, k) => (newestFirst ? n - 1 - k : k))
    const bal = this.balances
    const move = this.moves
    const breaks: BalanceBreak[] = []
    let breakCount = 0
    let prev = -1 // index (file order) of the last row whose balance is known, oldest-first walk
    let k = 0
    let opening = Number.NaN
    let closing = Number.NaN
    while (k < n) {
      // The group of rows sharing this row's second.
      let end = k + 1
      const t = at[order[k]!]!
      while (end < n && !Number.isNaN(t) && at[order[end]!] === t) end++
      const group = order.slice(k, end)
      k = end
      const known = group.filter((i) => !Number.isNaN(bal[i]!))
      if (known.length === 0) continue
      if (Number.isNaN(opening)) {
        const i0 = group[0]!
        if (!Number.isNaN(bal[i0]!)) opening = bal[i0]! - move[i0]!
      }
      if (prev < 0) {
        prev = known.at(-1)!
        closing = bal[prev]!
        continue
      }
      const before = bal[prev]!
      const net = group.reduce((s, i) => s + move[i]!, 0)
      // The group ends on the balance one of its rows prints: the last in booking order. Its
      // rows must chain among themselves in some order, so a balance that only happens to equal
      // the group's end does not hide a gap.
      const target = before + net
      const hit =
        known.length === group.length && group.length <= 8
          ? chainEnd(group, before, bal, move)
          : known.find((i) => bal[i] === target)
      if (hit === undefined) {
        // A single row: an exact expectation; a group: compare against its last printed row.
        const i = known.at(-1)!
        const expected = group.length === 1 ? before + move[i]! : target
        breakCount++
        if (breaks.length < MAX_BREAKS) {
          breaks.push({
            rows: [this.rowNos[prev]!, this.rowNos[i]!],
            between: [this.times[prev]!, this.times[i]!],
            expected,
            found: bal[i]!,
            missing: bal[i]! - expected,
          })
        }
        prev = i
      } else prev = hit
      closing = bal[prev]!
    }
    if (prev < 0) return null
    return { breaks, breakCount, opening, closing }
  }
}

function totalsMatch(
  file: FileTotals,
  rows: ProofVerdict['rows'],
  chain: { opening: number; closing: number } | null,
): boolean {
  let checked = false
  // A statement's TOTAL counts the amounts of its cancelled rows too (DESIGN §16): either way.
  if (file.paidIn !== undefined) {
    checked = true
    if (file.paidIn !== rows.paidIn && file.paidIn !== rows.paidInAll) return false
  }
  if (file.paidOut !== undefined) {
    checked = true
    if (file.paidOut !== rows.paidOut && file.paidOut !== rows.paidOutAll) return false
  }
  if (file.opening !== undefined && file.closing !== undefined) {
    checked = true
    if (file.opening + rows.paidIn - rows.paidOut !== file.closing) return false
  }
  if (chain && file.closing !== undefined && !Number.isNaN(chain.closing)) {
    checked = true
    if (chain.closing !== file.closing) return false
  }
  return checked
}

function stripUndefined(t: FileTotals): FileTotals {
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined)) as FileTotals
}

/**
 * The row a same-second group ends on when its rows chain from `before` in some order (each
 * balance the one before plus the row's move), or undefined when no order chains.
 */
function chainEnd(
  group: number[],
  before: number,
  bal: number[],
  move: number[],
): number | undefined {
  const used = new Array<boolean>(group.length).fill(false)
  const walk = (at: number, left: number): number | undefined => {
    for (let k = 0; k < group.length; k++) {
      if (used[k]) continue
      const i = group[k]!
      if (bal[i] !== at + move[i]!) continue
      if (left === 1) return i
      used[k] = true
      const end = walk(bal[i]!, left - 1)
      used[k] = false
      if (end !== undefined) return end
    }
    return undefined
  }
  return walk(before, group.length)
}
