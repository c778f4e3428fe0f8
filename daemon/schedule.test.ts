import { describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pruneBackups } from './backup-schedule.ts'
import { loadConfig } from './config.ts'
import { parseSchedule } from './schedule.ts'

const at = (iso: string) => new Date(iso)

describe('backup schedule', () => {
  it('runs an interval that long after the last run', () => {
    expect(parseSchedule('6h').next(at('2030-01-01T00:00:00Z')).toISOString()).toBe(
      '2030-01-01T06:00:00.000Z',
    )
  })

  it('runs a cron line at its next matching minute in UTC', () => {
    const daily = parseSchedule('0 3 * * *')
    expect(daily.next(at('2030-01-01T05:00:00Z')).toISOString()).toBe('2030-01-02T03:00:00.000Z')
    expect(daily.next(at('2030-01-01T02:59:30Z')).toISOString()).toBe('2030-01-01T03:00:00.000Z')
    const sundays = parseSchedule('30 1 * * 7')
    expect(sundays.next(at('2030-01-01T00:00:00Z')).toISOString()).toBe('2030-01-06T01:30:00.000Z')
    const quarterHours = parseSchedule('*/15 * * * *')
    expect(quarterHours.next(at('2030-01-01T00:16:00Z')).toISOString()).toBe(
      '2030-01-01T00:30:00.000Z',
    )
  })

  it('refuses a schedule it cannot read, naming the setting', () => {
    expect(() => parseSchedule('every day')).toThrow(/neither an interval/)
    expect(() => parseSchedule('61 * * * *')).toThrow(/minute '61' is outside 0-59/)
    expect(() => parseSchedule('0s')).toThrow(/shorter than a second/)
    expect(() => loadConfig({ env: { MMP_BACKUP_SCHEDULE: '0 25 * * *' } })).toThrow(
      /^backup\.schedule \(MMP_BACKUP_SCHEDULE\): cron hour '25'/,
    )
    expect(loadConfig({ env: { MMP_BACKUP_SCHEDULE: ' 1d ' } }).get('backup.schedule')).toBe('1d')
  })

  it('reads what croner adds: names, last day, nth weekday, nicknames and both day fields', () => {
    const from = at('2030-01-01T00:00:00Z')
    const next = (line: string) => parseSchedule(line).next(from).toISOString()
    expect(next('0 6 * * MON')).toBe('2030-01-07T06:00:00.000Z')
    expect(next('0 0 * FEB-MAR *')).toBe('2030-02-01T00:00:00.000Z')
    expect(next('0 0 L * *')).toBe('2030-01-31T00:00:00.000Z')
    expect(next('0 0 * * 5#2')).toBe('2030-01-11T00:00:00.000Z')
    expect(next('@daily')).toBe('2030-01-02T00:00:00.000Z')
    // Day of month 13 or a Friday (cron's rule when both are restricted): Friday 4 January first.
    expect(next('0 0 13 * 5')).toBe('2030-01-04T00:00:00.000Z')
    // Classic `from/step` and the leap day four years on.
    expect(next('5/20 * * * *')).toBe('2030-01-01T00:05:00.000Z')
    expect(next('0 0 29 2 *')).toBe('2032-02-29T00:00:00.000Z')
    // Strictly after: a run exactly at `from` is the one after it.
    expect(parseSchedule('0 3 * * *').next(at('2030-01-01T03:00:00Z')).toISOString()).toBe(
      '2030-01-02T03:00:00.000Z',
    )
  })

  it('refuses cron lines croner cannot read, naming the field and its range', () => {
    expect(() => parseSchedule('0 0 1-40 * *')).toThrow("cron day of month '1-40' is outside 1-31")
    expect(() => parseSchedule('0 0 * 13 *')).toThrow("cron month '13' is outside 1-12")
    expect(() => parseSchedule('0 0 * * 8')).toThrow("cron day of week '8' is outside 0-7")
    expect(() => parseSchedule('0 0 31 2 *')).toThrow("'0 0 31 2 *' never runs")
    // Seconds (a sixth field) are not a five-field line.
    expect(() => parseSchedule('0 0 3 * * *')).toThrow(/neither an interval/)
    expect(() => parseSchedule('x * * * *')).toThrow(
      /^'x \* \* \* \*' is not a cron line this reads: .*illegal characters/,
    )
    expect(() => parseSchedule('0 0 * * */8')).toThrow(/is not a cron line this reads: .*steps/)
    expect(() => parseSchedule('@sometimes')).toThrow(/is not a cron line this reads/)
  })

  it('keeps the newest complete backups and leaves unfinished ones to the next run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mmp-prune-'))
    const names = ['20300101T030000000Z', '20300102T030000000Z', '20300103T030000000Z']
    for (const n of names) {
      mkdirSync(join(dir, `mmp-backup-${n}`))
      writeFileSync(join(dir, `mmp-backup-${n}`, 'manifest.json'), '{}')
    }
    mkdirSync(join(dir, 'mmp-backup-20300104T030000000Z.partial'))
    mkdirSync(join(dir, 'unrelated'))
    expect(pruneBackups(dir, 2)).toEqual([join(dir, 'mmp-backup-20300101T030000000Z')])
    expect(readdirSync(dir).sort()).toEqual([
      'mmp-backup-20300102T030000000Z',
      'mmp-backup-20300103T030000000Z',
      'mmp-backup-20300104T030000000Z.partial',
      'unrelated',
    ])
    rmSync(dir, { recursive: true })
  })
})
