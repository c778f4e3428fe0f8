import { describe, expect, it } from 'bun:test'
import { progressBar } from './progress.ts'

const target = (tty: boolean, columns = 80) => {
  const writes: string[] = []
  return { writes, write: (t: string) => writes.push(t), tty, columns }
}

describe('progressBar', () => {
  it('draws nothing when stdout or stderr is not a terminal', () => {
    const t = target(false)
    const bar = progressBar('file.csv', 10, t)
    bar.update(5)
    bar.update(10)
    bar.done()
    expect(t.writes).toEqual([])
  })

  it('erases the line before each redraw and when done, so a shorter line leaves no debris', () => {
    const t = target(true)
    const bar = progressBar('backup', 100, t)
    bar.update(100, 'accepted 123456789')
    bar.update(100, 'x')
    bar.done()
    expect(t.writes).toHaveLength(3)
    for (const w of t.writes) expect(w.startsWith('\r\x1b[2K')).toBe(true)
    expect(t.writes[0]).toContain('100% 100/100 accepted 123456789')
    expect(t.writes[1]!.endsWith('100/100 x')).toBe(true)
    expect(t.writes[2]).toBe('\r\x1b[2K')
  })

  it('never draws wider than the terminal, so the line cannot wrap', () => {
    const t = target(true, 40)
    const bar = progressBar('a-very-long-statement-file-name.csv', 10, t)
    bar.update(10, 'accepted 10')
    expect(t.writes[0]!.length - '\r\x1b[2K'.length).toBeLessThanOrEqual(39)
  })
})
