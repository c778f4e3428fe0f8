/** Where a progress bar draws; a test passes its own. */
export interface BarTarget {
  write(text: string): unknown
  /** Drawn only on a terminal: on both stdout and stderr, so piped output never holds a bar. */
  tty: boolean
  columns?: number
}

const processTarget = (): BarTarget => ({
  write: (text) => process.stderr.write(text),
  tty: Boolean(process.stderr.isTTY && process.stdout.isTTY),
  columns: process.stderr.columns,
})

/** Erase the whole line and return to its start: a shorter redraw leaves no old characters. */
const CLEAR = '\r\x1b[2K'

/**
 * A one-line progress bar on stderr. Nothing is drawn unless stdout and stderr are terminals;
 * each redraw erases the line first and is cut to the terminal's width (a wrapped line could not
 * be erased), and `done()` erases the bar, so the command's own output follows a clean line.
 */
export function progressBar(label: string, total: number, target: BarTarget = processTarget()) {
  let last = 0
  let drawn = false
  return {
    update(done: number, extra = '') {
      const now = performance.now()
      if (!target.tty || (now - last < 80 && done < total)) return
      last = now
      const ratio = total > 0 ? Math.min(1, done / total) : 0
      const width = 30
      const fill = Math.round(ratio * width)
      const pct = `${(ratio * 100).toFixed(0).padStart(3)}%`
      const line = `${label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${pct} ${done}/${total} ${extra}`
      const max = Math.max(10, (target.columns ?? 80) - 1)
      target.write(CLEAR + line.slice(0, max).trimEnd())
      drawn = true
    },
    done() {
      if (drawn) target.write(CLEAR)
      drawn = false
    },
  }
}
