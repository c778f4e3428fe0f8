import { describe, expect, it } from 'bun:test'
import { parseLocalTime } from './local-time.ts'

describe('parseLocalTime', () => {
  it('reads every layout of a statement time in the tenant zone', () => {
    const nairobi = 'Africa/Nairobi'
    expect(parseLocalTime('2025-03-09 14:05:00', nairobi)).toBe('2025-03-09T11:05:00.000Z')
    expect(parseLocalTime('09-03-2025 14:05:00', nairobi)).toBe('2025-03-09T11:05:00.000Z')
    expect(parseLocalTime('2025-3-9 14:05', nairobi)).toBe('2025-03-09T11:05:00.000Z')
    expect(parseLocalTime('9/3/25 2:05 PM', nairobi)).toBe('2025-03-09T11:05:00.000Z')
    expect(parseLocalTime('2025-03-09T14:05:00+03:00', nairobi)).toBe('2025-03-09T11:05:00.000Z')
    expect(parseLocalTime('2025-03-09 14:05:00', 'Europe/London')).toBe('2025-03-09T14:05:00.000Z')
  })

  it('refuses a day or time no calendar has', () => {
    expect(parseLocalTime('2025-02-30 10:00:00', 'Africa/Nairobi')).toBeNull()
    expect(parseLocalTime('31-04-2025 10:00:00', 'Africa/Nairobi')).toBeNull()
    expect(parseLocalTime('2025-03-09 24:00:00', 'Africa/Nairobi')).toBeNull()
    expect(parseLocalTime('yesterday', 'Africa/Nairobi')).toBeNull()
  })
})
