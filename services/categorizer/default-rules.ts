import type { Category } from './text.ts'

export interface Rule {
  id: string
  name: string
  match: 'keyword' | 'regex'
  /** keyword: phrases separated by `|`, each matched as whole words, case-insensitively. */
  pattern: string
  category: Category
  priority: number
  confidence: number
  direction: 'in' | 'out' | null
  /** Cents. */
  minAmount: number | null
  maxAmount: number | null
  /** A phrase the counterparty name must contain (whole words). */
  counterparty: string | null
  active: boolean
  builtin: boolean
  createdAt?: string
  updatedAt?: string
}

const rule = (
  slug: string,
  name: string,
  category: Category,
  pattern: string,
  opts: Partial<Pick<Rule, 'priority' | 'confidence' | 'direction' | 'match'>> = {},
): Rule => ({
  id: `rul_default_${slug}`,
  name,
  match: opts.match ?? 'keyword',
  pattern,
  category,
  priority: opts.priority ?? 50,
  confidence: opts.confidence ?? 0.9,
  direction: opts.direction ?? null,
  minAmount: null,
  maxAmount: null,
  counterparty: null,
  active: true,
  builtin: true,
})

/**
 * Built-in rules for common Kenyan payees and M-Pesa wording. A tenant's own rules default to
 * priority 100, so they win over these; the catch-alls sit at the bottom.
 */
export const defaultRules: readonly Rule[] = [
  rule('reversal', 'Reversals', 'Other', 'reversal|reversed', { priority: 90, confidence: 0.95 }),
  rule(
    'loans',
    'Loans and overdrafts',
    'Other',
    'fuliza|m shwari|mshwari|kcb m pesa|tala|branch international|zenka|okash|hustler fund|loan|overdraft',
    { priority: 70 },
  ),
  rule(
    'tax',
    'Taxes and fees',
    'Other',
    'kra|itax|kenya revenue authority|transaction cost|charges',
    {
      priority: 60,
    },
  ),
  rule('cash', 'Cash withdrawal at an agent', 'Other', 'withdrawal|withdraw|agent till|atm', {
    priority: 40,
    direction: 'out',
    confidence: 0.7,
  }),
  rule(
    'power',
    'Electricity (KPLC)',
    'Utilities',
    'kplc|kenya power|kplc prepaid|kplc postpaid|power prepaid|electricity|umeme',
    { priority: 60, confidence: 0.97 },
  ),
  rule(
    'water',
    'Water',
    'Utilities',
    'nairobi water|nairobi city water|ncwsc|water bill|water company|water services|mawasco|eldowas|nawasco|kiwasco|gatundu water|water',
    { priority: 55, confidence: 0.93 },
  ),
  rule(
    'internet',
    'Internet and TV',
    'Utilities',
    'zuku|safaricom home|safaricom fibre|home fibre|faiba|jtl|wananchi|poa internet|internet|wifi|dstv|gotv|startimes|showmax|multichoice',
    { priority: 55, confidence: 0.93 },
  ),
  rule(
    'airtime',
    'Airtime and data',
    'Utilities',
    'airtime|data bundle|data bundles|bundle|bundles|safaricom data|airtel money|telkom|buy airtime|tunukiwa',
    { priority: 50, direction: 'out' },
  ),
  rule(
    'utility_misc',
    'Other utilities',
    'Utilities',
    'garbage|waste collection|gas refill|lpg|k gas|pro gas|afrigas|total gas',
    {
      priority: 45,
      confidence: 0.85,
    },
  ),
  rule(
    'fuel',
    'Fuel stations',
    'Transport',
    'shell|total|totalenergies|total energies|rubis|vivo energy|ola energy|kenol|kobil|hass petroleum|gulf energy|galana|petrol|petrol station|service station|fuel|diesel',
    { priority: 55, direction: 'out', confidence: 0.93 },
  ),
  rule(
    'rides',
    'Rides and fares',
    'Transport',
    'uber|bolt|little cab|little ride|faras|taxi|matatu|sacco|boda|bodaboda|boda boda|fare|bus fare|easy coach|modern coast|mash poa|guardian coach|madaraka express|sgr|kenya railways|jambojet|kenya airways|parking|ntsa|courier|g4s|fargo|sendy|wells fargo|transport|lorry|pickup hire|tuk tuk',
    { priority: 50, direction: 'out' },
  ),
  rule(
    'rent',
    'Rent',
    'Rent',
    'rent|house rent|shop rent|stall rent|landlord|landlady|lease|letting|estate agents|property management|properties|apartments|plaza',
    { priority: 50, direction: 'out', confidence: 0.9 },
  ),
  rule(
    'salaries',
    'Salaries and wages',
    'Salaries',
    'salary|salaries|wages|wage|payroll|casuals|casual|staff|stipend|allowance|nssf|nhif|shif|sha contribution|overtime|bonus',
    { priority: 50, direction: 'out', confidence: 0.9 },
  ),
  rule(
    'suppliers',
    'Suppliers and stock',
    'Inventory',
    'supplier|suppliers|supplies|wholesale|wholesalers|wholesaler|distributor|distributors|distributers|stockist|stock|restock|inventory|twiga|twiga foods|copia|wasoko|sokowatch|marketforce|bidco|unga|pembe|kapa|brookside|kcc|new kcc|coca cola|almasi|kenafric|mumias|chandaria|jamii|naivas|quickmart|carrefour|chandarana|tuskys|hardware|mitumba|packaging|raw materials|market|gikomba|marikiti|kongowea|wakulima',
    { priority: 45, direction: 'out', confidence: 0.85 },
  ),
  rule(
    'sales_words',
    'Sales and customer payments',
    'Revenue',
    'sale|sales|customer|invoice|order|payment for goods|lipa na m pesa|till',
    { priority: 20, direction: 'in', confidence: 0.85 },
  ),
  rule(
    'received',
    'Money received',
    'Revenue',
    'received|funds received|business payment from|payment from|deposit',
    {
      priority: 10,
      direction: 'in',
      confidence: 0.8,
    },
  ),
  rule('any_in', 'Any incoming payment', 'Revenue', '.', {
    priority: 1,
    direction: 'in',
    confidence: 0.6,
    match: 'regex',
  }),
]
