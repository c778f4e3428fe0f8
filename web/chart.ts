import uPlot from 'uplot'
import type { ForecastPoint } from '../schema/cashflow/views.ts'
import 'uplot/dist/uPlot.min.css'

export interface DailyPoint {
  date: string
  inflow: number
  outflow: number
  net: number
}

const dayMonth = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  timeZone: 'UTC',
})
const fullDay = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
})

/** Axis labels: 12k, 1.5M. */
const short = (v: number) =>
  Math.abs(v) >= 1e6 ? `${v / 1e6}M` : Math.abs(v) >= 1e3 ? `${v / 1e3}k` : String(v)

const ts = (d: string) => Date.parse(`${d.slice(0, 10)}T00:00:00Z`) / 1000

/**
 * Daily inflow (bars up) and outflow (bars down) with net, continued by the forecast's net and its 80 % and 95 % bands.
 */
export function cashflowChart(
  target: HTMLElement,
  daily: DailyPoint[],
  forecast: ForecastPoint[],
): uPlot {
  const xs = [...daily.map((d) => ts(d.date)), ...forecast.map((f) => ts(f.date))]
  const pad = (n: number) => Array<number | null>(n).fill(null)
  const hist = <K extends keyof DailyPoint>(k: K) => [
    ...daily.map((d) => d[k] as number),
    ...pad(forecast.length),
  ]
  const fc = <K extends keyof ForecastPoint>(k: K) => [
    ...pad(daily.length),
    ...forecast.map((f) => f[k] as number),
  ]
  const data: uPlot.AlignedData = [
    xs,
    hist('inflow'),
    [...daily.map((d) => -d.outflow), ...pad(forecast.length)],
    hist('net'),
    fc('net'),
    fc('lower_80'),
    fc('upper_80'),
    fc('lower_95'),
    fc('upper_95'),
    fc('balance').map((v) => v ?? null),
  ]
  const hasBalance = forecast.some((f) => f.balance !== null && f.balance !== undefined)
  const width = Math.max(240, target.clientWidth || 600)
  const bars = uPlot.paths.bars!({ size: [0.7, 12] })
  // The day under the pointer, in words (the legend is static).
  const readout = document.createElement('p')
  readout.className = 'readout muted'
  readout.textContent = 'Point at a day for its figures.'
  const fmt = (n: number | null | undefined) =>
    n === null || n === undefined ? '—' : `KES ${Math.round(n).toLocaleString('en-KE')}`
  const describe = (i: number) => {
    const day = fullDay.format(new Date(xs[i]! * 1000))
    if (i < daily.length) {
      const d = daily[i]!
      return `${day}: in ${fmt(d.inflow)}, out ${fmt(d.outflow)}, net ${fmt(d.net)}`
    }
    const f = forecast[i - daily.length]!
    return `${day} (forecast): net about ${fmt(f.net)}, likely between ${fmt(f.lower_80)} and ${fmt(f.upper_80)}${
      f.balance != null ? `; balance about ${fmt(f.balance)}` : ''
    }`
  }
  const opts: uPlot.Options = {
    width,
    height: 280,
    series: [
      {},
      { label: 'Inflow', stroke: '#1b873f', fill: 'rgba(27,135,63,0.8)', paths: bars },
      { label: 'Outflow', stroke: '#c62828', fill: 'rgba(198,40,40,0.8)', paths: bars },
      { label: 'Net', stroke: '#1f4e99', width: 2 },
      { label: 'Forecast net', stroke: '#1f4e99', dash: [6, 4], width: 2 },
      { label: '80 % low', stroke: 'transparent' },
      { label: '80 % high', stroke: 'transparent' },
      { label: '95 % low', stroke: 'transparent' },
      { label: '95 % high', stroke: 'transparent' },
      {
        label: 'Projected balance',
        stroke: '#8a5a00',
        width: 2,
        dash: [2, 3],
        scale: 'balance',
        show: hasBalance,
      },
    ],
    bands: [
      { series: [6, 5], fill: 'rgba(31,78,153,0.18)' },
      { series: [8, 7], fill: 'rgba(31,78,153,0.08)' },
    ],
    axes: [
      {
        // Whole days at least: a short period would otherwise label each day several times.
        incrs: [1, 2, 7, 14, 28, 56, 91].map((d) => d * 86_400),
        values: (_u, ticks) => ticks.map((t) => dayMonth.format(new Date(t * 1000))),
      },
      { size: 64, values: (_u, ticks) => ticks.map(short) },
      ...(hasBalance
        ? [
            {
              scale: 'balance',
              side: 1 as const,
              size: 64,
              grid: { show: false },
              stroke: '#8a5a00',
              values: (_u: uPlot, ticks: number[]) => ticks.map(short),
            },
          ]
        : []),
    ],
    legend: { show: false },
    hooks: {
      setCursor: [
        (u) => {
          const i = u.cursor.idx
          if (i !== null && i !== undefined) readout.textContent = describe(i)
        },
      ],
    },
  }
  const chart = new uPlot(opts, data, target)
  // Swatch colours are classes in styles.css: the CSP has no 'unsafe-inline' for style attributes.
  const key = (swatch: string, text: string) => {
    const li = document.createElement('li')
    const i = document.createElement('i')
    i.className = `swatch-${swatch}`
    li.append(i, text)
    return li
  }
  const legend = document.createElement('ul')
  legend.className = 'legend'
  legend.append(
    key('in', 'Inflow (up)'),
    key('out', 'Outflow (down)'),
    key('net', 'Net'),
    key('forecast', 'Forecast net'),
    key('band80', '80 % interval'),
    key('band95', '95 % interval'),
    ...(hasBalance ? [key('balance', 'Projected balance (right axis)')] : []),
  )
  target.append(legend, readout)
  const sum = (k: 'inflow' | 'outflow') => daily.reduce((s, d) => s + d[k], 0)
  chart.root.setAttribute('role', 'img')
  chart.root.setAttribute(
    'aria-label',
    `Daily cashflow from ${daily[0] ? fullDay.format(new Date(ts(daily[0].date) * 1000)) : ''} to ${daily.at(-1) ? fullDay.format(new Date(ts(daily.at(-1)!.date) * 1000)) : ''}: money in ${fmt(sum('inflow'))}, money out ${fmt(sum('outflow'))}${forecast.length ? `, with a ${forecast.length}-day forecast` : ''}.`,
  )
  return chart
}
