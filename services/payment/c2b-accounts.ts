import type { PaymentDeps } from './deps.ts'

/**
 * Account numbers on an aggregator paybill: the number a customer types as the account
 * (`BillRefNumber`) names the tenant. Each tenant gets a 6-digit number on first use, derived from
 * its id (the next free one after a collision) and kept in the platform database, so it never
 * changes. Anything after the digits (`482913#INV7`, `482913 table 4`) is the tenant's own
 * reference and stays in the transaction's account reference.
 */
export function createAccounts(deps: PaymentDeps) {
  const derive = (tid: string): number => {
    const h = new Bun.CryptoHasher('sha256').update(`c2b-account:${tid}`).digest()
    return 100_000 + (h.readUInt32BE(0) % 900_000)
  }

  function accountNumberOf(tid: string): string {
    const platform = deps.platform()
    const read = () =>
      platform.sqlite
        .query<{ account_number: string }, [string]>(
          'SELECT account_number FROM c2b_accounts WHERE tenant_id = ?',
        )
        .get(tid)?.account_number
    const known = read()
    if (known) return known
    return platform.write(() => {
      const again = read()
      if (again) return again
      const taken = platform.sqlite.query<{ n: number }, [string]>(
        'SELECT 1 AS n FROM c2b_accounts WHERE account_number = ?',
      )
      let n = derive(tid)
      while (taken.get(String(n))) n = n >= 999_999 ? 100_000 : n + 1
      platform.sqlite
        .query('INSERT INTO c2b_accounts (tenant_id, account_number, created_at) VALUES (?, ?, ?)')
        .run(tid, String(n), deps.nowIso())
      return String(n)
    })
  }

  /** The tenant an account reference names, and the rest of the reference; null when none. */
  function route(billRef: string | null | undefined): { tenantId: string; rest: string } | null {
    const m = /^\s*(\d{6})(?!\d)\s*[#\-/.:_ ]?\s*(.*)$/.exec(billRef ?? '')
    if (!m) return null
    const row = deps
      .platform()
      .sqlite.query<{ tenant_id: string }, [string]>(
        'SELECT tenant_id FROM c2b_accounts WHERE account_number = ?',
      )
      .get(m[1]!)
    return row ? { tenantId: row.tenant_id, rest: m[2]!.trim() } : null
  }

  return { accountNumberOf, route }
}

export type Accounts = ReturnType<typeof createAccounts>
