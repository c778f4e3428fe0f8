import { describe, expect, it } from 'bun:test'
import { timeZone } from '../kernel/time-zone.ts'
import { localToUtc } from './local-time.ts'

describe('localToUtc', () => {
  it('gives the kernel zone conversion for every wall time, across changes of offset', () => {
    const zones = ['Africa/Nairobi', 'Europe/London', 'America/New_York', 'Australia/Lord_Howe']
    let mismatches = 0
    for (const zone of zones) {
      // Every 47 min 13 s over two years: each change of offset is crossed at odd minutes.
      for (let t = Date.UTC(2024, 0, 1); t < Date.UTC(2026, 0, 1); t += 2_833_000) {
        const d = new Date(t)
        const wall = [
          d.getUTCFullYear(),
          d.getUTCMonth() + 1,
          d.getUTCDate(),
          d.getUTCHours(),
          d.getUTCMinutes(),
          d.getUTCSeconds(),
        ] as const
        const [year, month, day, hour, minute, second] = wall
        const kernel = timeZone(zone).localToUtc({ year, month, day, hour, minute, second })
        if (localToUtc(zone, ...wall) !== kernel) mismatches++
      }
    }
    expect(mismatches).toBe(0)
    expect(localToUtc('Africa/Nairobi', 2025, 3, 9, 14, 5, 0)).toBe('2025-03-09T11:05:00.000Z')
    expect(localToUtc('Africa/Nairobi', 2025, 2, 30)).toBeNull()
  })
})
