import type { rules } from '../../schema/categorizer/tables.ts'
import type { Category } from './text.ts'

/**
 * A categorization rule, stored (a tenant's, `rules` table) or built in: the table's row with its
 * text columns narrowed. keyword `pattern`: phrases separated by `|`, each matched as whole words,
 * case-insensitively; `counterparty`: a phrase the counterparty name must contain (whole words);
 * amounts in cents.
 */
export type Rule = Omit<
  typeof rules.$inferSelect,
  'tenantId' | 'match' | 'category' | 'direction' | 'createdAt' | 'updatedAt'
> & {
  match: 'keyword' | 'regex'
  category: Category
  direction: 'in' | 'out' | null
  builtin: boolean
  createdAt?: string
  updatedAt?: string
}

/** A built-in rule: its slug, name, category and pattern, and what differs from the defaults. */
type BuiltinRule = Pick<Rule, 'name' | 'category' | 'pattern'> &
  Partial<Pick<Rule, 'priority' | 'confidence' | 'direction' | 'match'>> & { slug: string }

const rule = ({ slug, name, category, pattern, ...opts }: BuiltinRule): Rule => ({
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
  rule({
    slug: 'reversal',
    name: 'Reversals',
    category: 'Other',
    pattern: 'reversal|reversed',
    priority: 90,
    confidence: 0.95,
  }),
  rule({
    slug: 'loans',
    name: 'Loans and overdrafts',
    category: 'Other',
    pattern:
      'fuliza|m shwari|mshwari|kcb m pesa|tala|branch international|zenka|okash|hustler fund|loan|overdraft',
    priority: 70,
  }),
  rule({
    slug: 'tax',
    name: 'Taxes and fees',
    category: 'Other',
    pattern: 'kra|itax|kenya revenue authority|transaction cost|charges',
    priority: 60,
  }),
  rule({
    slug: 'cash',
    name: 'Cash withdrawal at an agent',
    category: 'Other',
    pattern: 'withdrawal|withdraw|agent till|atm',
    priority: 40,
    direction: 'out',
    confidence: 0.7,
  }),
  rule({
    slug: 'power',
    name: 'Electricity (KPLC)',
    category: 'Utilities',
    pattern: 'kplc|kenya power|kplc prepaid|kplc postpaid|power prepaid|electricity|umeme',
    priority: 60,
    confidence: 0.97,
  }),
  rule({
    slug: 'water',
    name: 'Water',
    category: 'Utilities',
    pattern:
      'nairobi water|nairobi city water|ncwsc|water bill|water company|water services|mawasco|eldowas|nawasco|kiwasco|gatundu water|water',
    priority: 55,
    confidence: 0.93,
  }),
  rule({
    slug: 'internet',
    name: 'Internet and TV',
    category: 'Utilities',
    pattern:
      'zuku|safaricom home|safaricom fibre|home fibre|faiba|jtl|wananchi|poa internet|internet|wifi|dstv|gotv|startimes|showmax|multichoice',
    priority: 55,
    confidence: 0.93,
  }),
  rule({
    slug: 'airtime',
    name: 'Airtime and data',
    category: 'Utilities',
    pattern:
      'airtime|data bundle|data bundles|bundle|bundles|safaricom data|airtel money|telkom|buy airtime|tunukiwa',
    priority: 50,
    direction: 'out',
  }),
  rule({
    slug: 'utility_misc',
    name: 'Other utilities',
    category: 'Utilities',
    pattern: 'garbage|waste collection|gas refill|lpg|k gas|pro gas|afrigas|total gas',
    priority: 45,
    confidence: 0.85,
  }),
  rule({
    slug: 'fuel',
    name: 'Fuel stations',
    category: 'Transport',
    pattern:
      'shell|total|totalenergies|total energies|rubis|vivo energy|ola energy|kenol|kobil|hass petroleum|gulf energy|galana|petrol|petrol station|service station|fuel|diesel',
    priority: 55,
    direction: 'out',
    confidence: 0.93,
  }),
  rule({
    slug: 'rides',
    name: 'Rides and fares',
    category: 'Transport',
    pattern:
      'uber|bolt|little cab|little ride|faras|taxi|matatu|sacco|boda|bodaboda|boda boda|fare|bus fare|easy coach|modern coast|mash poa|guardian coach|madaraka express|sgr|kenya railways|jambojet|kenya airways|parking|ntsa|courier|g4s|fargo|sendy|wells fargo|transport|lorry|pickup hire|tuk tuk',
    priority: 50,
    direction: 'out',
  }),
  rule({
    slug: 'rent',
    name: 'Rent',
    category: 'Rent',
    pattern:
      'rent|house rent|shop rent|stall rent|landlord|landlady|lease|letting|estate agents|property management|properties|apartments|plaza',
    priority: 50,
    direction: 'out',
    confidence: 0.9,
  }),
  rule({
    slug: 'salaries',
    name: 'Salaries and wages',
    category: 'Salaries',
    pattern:
      'salary|salaries|wages|wage|payroll|casuals|casual|staff|stipend|allowance|nssf|nhif|shif|sha contribution|overtime|bonus',
    priority: 50,
    direction: 'out',
    confidence: 0.9,
  }),
  rule({
    slug: 'suppliers',
    name: 'Suppliers and stock',
    category: 'Inventory',
    pattern:
      'supplier|suppliers|supplies|wholesale|wholesalers|wholesaler|distributor|distributors|distributers|stockist|stock|restock|inventory|twiga|twiga foods|copia|wasoko|sokowatch|marketforce|bidco|unga|pembe|kapa|brookside|kcc|new kcc|coca cola|almasi|kenafric|mumias|chandaria|jamii|naivas|quickmart|carrefour|chandarana|tuskys|hardware|mitumba|packaging|raw materials|market|gikomba|marikiti|kongowea|wakulima',
    priority: 45,
    direction: 'out',
    confidence: 0.85,
  }),
  rule({
    slug: 'sales_words',
    name: 'Sales and customer payments',
    category: 'Revenue',
    pattern: 'sale|sales|customer|invoice|order|payment for goods|lipa na m pesa|till',
    priority: 20,
    direction: 'in',
    confidence: 0.85,
  }),
  rule({
    slug: 'received',
    name: 'Money received',
    category: 'Revenue',
    pattern: 'received|funds received|business payment from|payment from|deposit',
    priority: 10,
    direction: 'in',
    confidence: 0.8,
  }),
  rule({
    slug: 'any_in',
    name: 'Any incoming payment',
    category: 'Revenue',
    pattern: '.',
    priority: 1,
    direction: 'in',
    confidence: 0.6,
    match: 'regex',
  }),
]
