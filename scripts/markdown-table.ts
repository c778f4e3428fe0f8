/** A Markdown table laid out as Biome formats one: cells padded to their column's width. */
export function markdownTable(header: string[], rows: string[][]): string {
  const cell = (c: string) => c.replaceAll('|', '\\|')
  const all = [header, ...rows].map((r) => r.map(cell))
  const widths = header.map((_, i) => Math.max(3, ...all.map((r) => r[i]!.length)))
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`
  return [line(all[0]!), rule, ...all.slice(1).map(line)].join('\n')
}
