/** Small helpers shared by the benchmarks: percentiles and a uniform result line. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}

/** Prints `name: value unit (target …) [reference …, ratio …]` on one line. */
export function report(line: {
  name: string
  value: number
  unit: string
  target?: string
  ok?: boolean
  reference?: { name: string; value: number }
}): void {
  const parts = [`${line.name}: ${line.value.toFixed(2)} ${line.unit}`]
  if (line.target)
    parts.push(`target ${line.target}${line.ok === undefined ? '' : line.ok ? ' ✓' : ' ✗'}`)
  if (line.reference) {
    parts.push(`reference ${line.reference.name} ${line.reference.value.toFixed(2)} ${line.unit}`)
    parts.push(`ratio ${(line.value / line.reference.value).toFixed(2)}×`)
  }
  console.log(parts.join(' | '))
}
