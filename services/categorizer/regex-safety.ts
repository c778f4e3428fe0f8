import { invalidField } from '../kernel/errors.ts'

export const MAX_PATTERN_LENGTH = 200

/**
 * Refuses regular expressions that can backtrack catastrophically instead of running them under
 * a clock: JavaScript regexes cannot be interrupted. Refused: patterns over 200 characters,
 * backreferences, lookarounds, and a quantified group that itself holds a quantifier or an
 * alternation (`(a+)+`, `(a|aa)*`, `(\w*x)+`) — the shapes behind exponential matching.
 * Returns the compiled, case-insensitive regex.
 */
export function compileSafeRegex(pattern: string, field = 'pattern'): RegExp {
  if (pattern.length === 0) throw invalidField(field, 'must not be empty')
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw invalidField(field, `must be at most ${MAX_PATTERN_LENGTH} characters`)
  if (/\\[1-9]|\\k</.test(pattern)) throw invalidField(field, 'backreferences are not allowed')
  if (/\(\?<?[=!]/.test(pattern)) throw invalidField(field, 'lookarounds are not allowed')
  // Walk the pattern tracking groups: a group that contains a quantifier or `|` must not be
  // quantified itself.
  const stack: Array<{ risky: boolean }> = [{ risky: false }]
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '\\') {
      i++
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      continue
    }
    if (c === '[') inClass = true
    else if (c === '(') stack.push({ risky: false })
    else if (c === ')') {
      const group = stack.pop()
      if (!group || stack.length === 0) throw invalidField(field, 'has unbalanced parentheses')
      const next = pattern[i + 1]
      const quantified = next === '*' || next === '+' || next === '{' || next === '?'
      if (group.risky && quantified && next !== '?')
        throw invalidField(
          field,
          'nested quantifiers such as (a+)+ or (a|b)* can take exponential time and are not allowed',
        )
      if (group.risky || quantified) stack[stack.length - 1]!.risky = true
    } else if (c === '*' || c === '+' || c === '{' || c === '|') {
      stack[stack.length - 1]!.risky = true
    }
  }
  if (stack.length !== 1) throw invalidField(field, 'has unbalanced parentheses')
  try {
    return new RegExp(pattern, 'i')
  } catch (err) {
    throw invalidField(field, `is not a valid regular expression: ${(err as Error).message}`)
  }
}
