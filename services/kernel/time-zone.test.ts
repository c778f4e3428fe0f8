import { describe, expect, it } from 'bun:test'
import { dayIn, timeZone } from './time-zone.ts'

const formats = new Map<string, Intl.DateTimeFormat>()

/** The wall-clock time of an instant in a zone, read by Intl (not by the module under test). */
function wallOf(zone: string, ms: number) {
  let format = formats.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formats.set(zone, format)
  }
  const parts = format.formatToParts(new Date(ms))
  const n = (type: string) => Number(parts.find((p) => p.type === type)!.value)
  return {
    year: n('year'),
    month: n('month'),
    day: n('day'),
    hour: n('hour'),
    minute: n('minute'),
    second: n('second'),
  }
}

describe('time zones', () => {
  it('turns every wall-clock time back into its instant, across changes of offset', () => {
    const zones = ['Africa/Nairobi', 'Europe/London', 'America/Sao_Paulo', 'Australia/Lord_Howe']
    let wrong = 0
    for (const zone of zones) {
      const z = timeZone(zone)
      // Every 47 min 13 s over two years: each change of offset is crossed at odd minutes.
      for (let t = Date.UTC(2017, 0, 1); t < Date.UTC(2019, 0, 1); t += 2_833_000) {
        const at = Date.parse(z.localToUtc(wallOf(zone, t))!)
        // A time that came twice (the hour repeated when clocks go back) is its first coming.
        if (at !== t && !(at < t && t - at <= 3_600_000)) wrong++
        if (JSON.stringify(wallOf(zone, at)) !== JSON.stringify(wallOf(zone, t))) wrong++
      }
    }
    expect(wrong).toBe(0)
  })

  it('reads a skipped time after the gap and a repeated time at its first coming, as Temporal', () => {
    const london = timeZone('Europe/London')
    // 30 March 2025: 01:00 GMT became 02:00 BST.
    expect(london.localToUtc({ year: 2025, month: 3, day: 30, hour: 1, minute: 30 })).toBe(
      '2025-03-30T01:30:00.000Z',
    )
    expect(london.localToUtc({ year: 2025, month: 3, day: 30, hour: 2 })).toBe(
      '2025-03-30T01:00:00.000Z',
    )
    // 26 October 2025: 01:30 came twice, in BST and then in GMT.
    expect(london.localToUtc({ year: 2025, month: 10, day: 26, hour: 1, minute: 30 })).toBe(
      '2025-10-26T00:30:00.000Z',
    )
    // New York skipped 02:00-03:00 on 9 March 2008: 02:30 is read as 03:30 EDT.
    expect(
      timeZone('America/New_York').localToUtc({
        year: 2008,
        month: 3,
        day: 9,
        hour: 2,
        minute: 30,
      }),
    ).toBe('2008-03-09T07:30:00.000Z')
    // São Paulo skipped midnight on 4 November 2018: the day began at 01:00 (-02), not in the
    // evening before.
    const saoPaulo = timeZone('America/Sao_Paulo')
    expect(saoPaulo.localToUtc({ year: 2018, month: 11, day: 4 })).toBe('2018-11-04T03:00:00.000Z')
    const start = saoPaulo.startOf('2018-11-04')
    expect(new Date(start).toISOString()).toBe('2018-11-04T03:00:00.000Z')
    expect(saoPaulo.dayOf(start)).toBe('2018-11-04')
    expect(saoPaulo.dayOf(start - 1)).toBe('2018-11-03')
  })

  it('refuses dates and times that do not exist, and reads days in the zone', () => {
    const nairobi = timeZone('Africa/Nairobi')
    expect(nairobi.localToUtc({ year: 2026, month: 3, day: 2, hour: 1, minute: 30 })).toBe(
      '2026-03-01T22:30:00.000Z',
    )
    expect(nairobi.localToUtc({ year: 2025, month: 2, day: 29 })).toBeNull()
    expect(nairobi.localToUtc({ year: 2024, month: 2, day: 29 })).toBe('2024-02-28T21:00:00.000Z')
    expect(nairobi.localToUtc({ year: 2025, month: 4, day: 31 })).toBeNull()
    expect(nairobi.localToUtc({ year: 2025, month: 13, day: 1 })).toBeNull()
    expect(nairobi.localToUtc({ year: 2025, month: 1, day: 1, hour: 24 })).toBeNull()
    expect(nairobi.dayOf(Date.parse('2026-03-01T22:30:00Z'))).toBe('2026-03-02')
    expect(dayIn('Africa/Nairobi', new Date('2026-03-01T20:59:59Z'))).toBe('2026-03-01')
    // An unknown zone is the default one.
    expect(timeZone('Nowhere/Atlantis').name).toBe('Africa/Nairobi')
  })
})
