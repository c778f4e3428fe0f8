/**
 * Additive Holt-Winters with a damped trend and a weekly season (ETS(A,Ad,A)), written in
 * error-correction form so the h-step forecast variance has a closed form:
 *   ŷ = l + φb + s[t mod m],  e = y − ŷ
 *   l ← l + φb + αe,  b ← φb + αβe,  s[t mod m] ← s[t mod m] + γe
 * Parameters minimise the one-step SSE: a coarse grid, then Nelder–Mead from the best point.
 */
export interface HwParams {
  alpha: number
  beta: number
  gamma: number
  phi: number
}

export interface HwFit {
  params: HwParams
  seasonLength: number
  level: number
  trend: number
  /** Seasonal states; `season[(n + k) % m]` is the one for the k-th day after the history. */
  season: number[]
  n: number
  sse: number
  /** Residual standard deviation of the one-step errors. */
  sigma: number
}

interface RunResult {
  sse: number
  count: number
  level: number
  trend: number
  season: number[]
}

function run(y: ArrayLike<number>, p: HwParams, m: number): RunResult {
  const n = y.length
  let l0 = 0
  let l1 = 0
  for (let i = 0; i < m; i++) {
    l0 += y[i]!
    l1 += y[i + m]!
  }
  l0 /= m
  l1 /= m
  let level = l0
  let trend = (l1 - l0) / m
  const season = new Array<number>(m)
  for (let i = 0; i < m; i++) season[i] = y[i]! - l0
  // The first season set the initial states; the errors counted start after it.
  level = l0 + trend * ((m - 1) / 2)
  const { alpha, beta, gamma, phi } = p
  const ab = alpha * beta
  let sse = 0
  let count = 0
  for (let t = m; t < n; t++) {
    const s = t % m
    const damped = phi * trend
    const e = y[t]! - (level + damped + season[s]!)
    level = level + damped + alpha * e
    trend = damped + ab * e
    season[s] = season[s]! + gamma * e
    sse += e * e
    count++
  }
  return { sse, count, level, trend, season }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

function bounded(x: number[]): HwParams {
  return {
    alpha: clamp(x[0]!, 0.001, 0.999),
    beta: clamp(x[1]!, 0, 1),
    gamma: clamp(x[2]!, 0, 0.999),
    phi: clamp(x[3]!, 0.8, 0.995),
  }
}

function objective(y: ArrayLike<number>, m: number, x: number[]): number {
  const p = bounded(x)
  // Admissible region: keeps the model forecastable (Hyndman et al., 2008).
  if (p.gamma > 1 - p.alpha) return Number.POSITIVE_INFINITY
  return run(y, p, m).sse
}

function nelderMead(f: (x: number[]) => number, start: number[], iterations: number): number[] {
  const dim = start.length
  const simplex: Array<{ x: number[]; v: number }> = [{ x: start, v: f(start) }]
  for (let i = 0; i < dim; i++) {
    const x = [...start]
    x[i] = x[i]! + (x[i]! > 0.05 ? x[i]! * 0.25 : 0.025)
    simplex.push({ x, v: f(x) })
  }
  for (let it = 0; it < iterations; it++) {
    simplex.sort((a, b) => a.v - b.v)
    const best = simplex[0]!
    const worst = simplex[dim]!
    if (Math.abs(worst.v - best.v) <= 1e-10 * (Math.abs(best.v) + 1e-12)) break
    const centroid = new Array<number>(dim).fill(0)
    for (let i = 0; i < dim; i++)
      for (let j = 0; j < dim; j++) centroid[j]! += simplex[i]!.x[j]! / dim
    const along = (t: number) => centroid.map((c, j) => c + t * (worst.x[j]! - c))
    const reflected = along(-1)
    const rv = f(reflected)
    if (rv < best.v) {
      const expanded = along(-2)
      const ev = f(expanded)
      simplex[dim] = ev < rv ? { x: expanded, v: ev } : { x: reflected, v: rv }
    } else if (rv < simplex[dim - 1]!.v) {
      simplex[dim] = { x: reflected, v: rv }
    } else {
      const contracted = along(rv < worst.v ? -0.5 : 0.5)
      const cv = f(contracted)
      if (cv < Math.min(rv, worst.v)) {
        simplex[dim] = { x: contracted, v: cv }
      } else {
        for (let i = 1; i <= dim; i++) {
          const x = simplex[i]!.x.map((v, j) => best.x[j]! + 0.5 * (v - best.x[j]!))
          simplex[i] = { x, v: f(x) }
        }
      }
    }
  }
  simplex.sort((a, b) => a.v - b.v)
  return simplex[0]!.x
}

const GRID = {
  alpha: [0.01, 0.03, 0.07, 0.15, 0.3, 0.5],
  beta: [0, 0.02, 0.1],
  gamma: [0.01, 0.05, 0.15, 0.3],
  phi: [0.85, 0.95, 0.98],
}

/** Fits the model to a daily series of at least two seasons. */
export function fitHoltWinters(y: ArrayLike<number>, m = 7): HwFit {
  if (y.length < 2 * m) throw new Error(`Holt-Winters needs at least ${2 * m} observations`)
  let best = { x: [0.1, 0.02, 0.05, 0.95], v: Number.POSITIVE_INFINITY }
  for (const alpha of GRID.alpha)
    for (const beta of GRID.beta)
      for (const gamma of GRID.gamma)
        for (const phi of GRID.phi) {
          const x = [alpha, beta, gamma, phi]
          const v = objective(y, m, x)
          if (v < best.v) best = { x, v }
        }
  const x = nelderMead((x) => objective(y, m, x), best.x, 120)
  const params = bounded(objective(y, m, x) <= best.v ? x : best.x)
  const r = run(y, params, m)
  const dof = Math.max(1, r.count - 4)
  return {
    params,
    seasonLength: m,
    level: r.level,
    trend: r.trend,
    season: r.season,
    n: y.length,
    sse: r.sse,
    sigma: Math.sqrt(r.sse / dof),
  }
}

/** Point forecasts and their standard deviations for the next `horizon` days. */
export function forecastHoltWinters(fit: HwFit, horizon: number): { mean: number[]; sd: number[] } {
  const { alpha, beta, gamma, phi } = fit.params
  const m = fit.seasonLength
  const mean = new Array<number>(horizon)
  const sd = new Array<number>(horizon)
  let phiSum = 0
  let phiPow = 1
  let varianceSum = 1
  for (let h = 1; h <= horizon; h++) {
    phiPow *= phi
    phiSum += phiPow
    mean[h - 1] = fit.level + phiSum * fit.trend + fit.season[(fit.n + h - 1) % m]!
    sd[h - 1] = fit.sigma * Math.sqrt(varianceSum)
    // c_h adds to the variance of the next step: α + αβ·(φ + … + φ^h) + γ when a season passed.
    const c = alpha + alpha * beta * phiSum + (h % m === 0 ? gamma : 0)
    varianceSum += c * c
  }
  return { mean, sd }
}

/** Seasonal naive: each future day repeats the same weekday of the last observed week. */
export function seasonalNaive(y: ArrayLike<number>, horizon: number, m = 7): number[] {
  const n = y.length
  const out = new Array<number>(horizon)
  for (let h = 1; h <= horizon; h++) out[h - 1] = y[n - m + ((h - 1) % m)]!
  return out
}
