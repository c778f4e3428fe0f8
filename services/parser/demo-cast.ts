/** Names of the demo shop's customers and staff (made up, Kenyan first and family names). */
const FIRST = [
  'JOHN',
  'MARY',
  'PETER',
  'GRACE',
  'JAMES',
  'ANN',
  'DAVID',
  'FAITH',
  'SAMUEL',
  'LUCY',
  'BRIAN',
  'ESTHER',
  'KEVIN',
  'MERCY',
  'JOSEPH',
  'SARAH',
  'DANIEL',
  'JANE',
  'PAUL',
  'RUTH',
]
const LAST = [
  'KAMAU',
  'WANJIKU',
  'OTIENO',
  'AKINYI',
  'MWANGI',
  'NJERI',
  'KIPROTICH',
  'CHEBET',
  'ODHIAMBO',
  'WAIRIMU',
  'OMONDI',
  'MUTHONI',
  'KIBET',
  'ATIENO',
  'NJOROGE',
  'WAMBUI',
  'MUTUA',
]

/**
 * The shop's people: 120 customers, the first coming back far more often (Zipf-like), each with a
 * usual basket, and 3 staff with their pay.
 */
export function demoCast(rnd: () => number, pick: <T>(xs: readonly T[]) => T, phone: () => string) {
  const customers = Array.from({ length: 120 }, (_, i) => ({
    name: `${pick(FIRST)} ${pick(LAST)}`,
    phone: phone(),
    // Zipf-like: the first customers come back far more often.
    weight: 1 / (i + 1) ** 0.8,
    basket: 150 + rnd() * 1500,
  }))
  const totalWeight = customers.reduce((s, c) => s + c.weight, 0)
  const customer = () => {
    let r = rnd() * totalWeight
    for (const c of customers) {
      r -= c.weight
      if (r <= 0) return c
    }
    return customers[0]!
  }
  const staff = Array.from({ length: 3 }, () => ({
    name: `${pick(FIRST)} ${pick(LAST)}`,
    phone: phone(),
    pay: Math.round(15000 + rnd() * 10000),
  }))
  return { customer, staff }
}
