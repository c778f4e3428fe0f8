/**
 * Small numeric helpers for trend and seasonality tests: ordinary least squares with the slope's
 * t statistic, and Student t / F tail probabilities from the regularized incomplete beta function.
 */

function logGamma(x: number): number {
  const g = 7
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x)
  const z = x - 1
  let a = c[0]!
  const t = z + g + 0.5
  for (let i = 1; i < g + 2; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Continued fraction of the incomplete beta function (Lentz's method). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-12) break
  }
  return h
}

/** The regularized incomplete beta function I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(
    logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x),
  )
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b
}

/** Two-sided p-value of a Student t statistic with `df` degrees of freedom. */
export function tTestPValue(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0
  if (df <= 0) return 1
  return incompleteBeta(df / (df + t * t), df / 2, 0.5)
}

/** Upper-tail p-value of an F statistic. */
export function fTestPValue(f: number, df1: number, df2: number): number {
  if (!Number.isFinite(f)) return 0
  if (f <= 0 || df1 <= 0 || df2 <= 0) return 1
  return incompleteBeta(df2 / (df2 + df1 * f), df2 / 2, df1 / 2)
}

/** Rounded to four decimals (null stays null). */
export const round4 = <T extends number | null>(v: T): T =>
  (v === null ? null : Math.round(v * 10000) / 10000) as T

export interface LinearFit {
  slope: number
  intercept: number
  slope_std_error: number | null
  t_stat: number | null
  p_value: number | null
  r_squared: number | null
  n: number
}

/** OLS of y on x = 0..n-1; the slope's t test has n-2 degrees of freedom. */
export function linearTrend(y: readonly number[]): LinearFit {
  const n = y.length
  if (n === 0) {
    return {
      slope: 0,
      intercept: 0,
      slope_std_error: null,
      t_stat: null,
      p_value: null,
      r_squared: null,
      n,
    }
  }
  const xMean = (n - 1) / 2
  let yMean = 0
  for (const v of y) yMean += v
  yMean /= n
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    const dx = i - xMean
    const dy = y[i]! - yMean
    sxy += dx * dy
    sxx += dx * dx
    syy += dy * dy
  }
  const slope = sxx > 0 ? sxy / sxx : 0
  const intercept = yMean - slope * xMean
  if (n < 3 || sxx === 0) {
    return {
      slope,
      intercept,
      slope_std_error: null,
      t_stat: null,
      p_value: null,
      r_squared: null,
      n,
    }
  }
  const sse = Math.max(0, syy - slope * sxy)
  const se = Math.sqrt(sse / (n - 2) / sxx)
  const tStat = se > 0 ? slope / se : slope === 0 ? 0 : Number.POSITIVE_INFINITY * Math.sign(slope)
  return {
    slope,
    intercept,
    slope_std_error: se,
    t_stat: Number.isFinite(tStat) ? tStat : null,
    p_value: tTestPValue(tStat, n - 2),
    r_squared: syy > 0 ? 1 - sse / syy : null,
    n,
  }
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0
  let s = 0
  for (const v of values) s += v
  return s / values.length
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export function stdDev(values: readonly number[]): number {
  if (values.length < 2) return 0
  const m = mean(values)
  let s = 0
  for (const v of values) s += (v - m) * (v - m)
  return Math.sqrt(s / (values.length - 1))
}

/** z quantiles of the two-sided 80% and 95% intervals. */
export const Z80 = 1.2815515655446004
export const Z95 = 1.959963984540054
