import type { ZxcvbnFactory } from '@zxcvbn-ts/core'
import { invalidField } from '../kernel/errors.ts'

/** Shortest password accepted anywhere one is set. */
export const MIN_PASSWORD_LENGTH = 10
/** zxcvbn score (0–4) a password needs: 3 is "safely unguessable" (~10^8 guesses offline). */
export const MIN_PASSWORD_SCORE = 3

// Loaded on first use: the dictionaries cost ~25 MB and ~40 ms, which startup need not pay.
let factory: Promise<ZxcvbnFactory> | null = null
const estimator = () => {
  factory ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]).then(
    ([core, common]) =>
      new core.ZxcvbnFactory({ dictionary: common.dictionary, graphs: common.adjacencyGraphs }),
  )
  return factory
}

/** Why zxcvbn found it weak, in words (it returns translation keys without a language pack). */
const WARNINGS: Record<string, string> = {
  straightRow: 'it is a straight row of keys',
  keyPattern: 'it is a short keyboard pattern',
  simpleRepeat: 'it repeats characters',
  extendedRepeat: 'it repeats a pattern',
  sequences: 'it is a common sequence such as abc or 123',
  recentYears: 'it contains a recent year',
  dates: 'it contains a date',
  topTen: 'it is among the ten most used passwords',
  topHundred: 'it is among the hundred most used passwords',
  common: 'it is a commonly used password',
  similarToCommon: 'it is a common password with small changes',
  wordByItself: 'it is a single word',
  namesByThemselves: 'it is a name',
  commonNames: 'it is a common name',
  userInputs: 'it contains the email or tenant name',
}

/**
 * Refuses a password that is short, one common password (a leaked-password list entry, l33t or
 * reversed included), or guessable per zxcvbn, with a 422 naming `field` and the reason.
 * `context` (email, tenant) counts as known to an attacker, so a password built from it is weak.
 *
 * @example
 * await assertStrongPassword(body.password, 'password', [body.email, body.tenant_id])
 */
export async function assertStrongPassword(
  password: string,
  field: string,
  context: readonly string[] = [],
): Promise<void> {
  if ([...password].length < MIN_PASSWORD_LENGTH)
    throw invalidField(field, `must be at least ${MIN_PASSWORD_LENGTH} characters long`)
  const inputs = context.flatMap((c) => [c, ...c.split(/[@.+_-]/)]).filter((c) => c.length >= 3)
  const result = (await estimator()).check(password, inputs)
  const [only] = result.sequence
  if (
    result.sequence.length === 1 &&
    only?.pattern === 'dictionary' &&
    only.dictionaryName === 'passwords-common'
  )
    throw invalidField(field, 'is a commonly used password; choose another')
  if (result.score < MIN_PASSWORD_SCORE) {
    const why = WARNINGS[result.feedback.warning ?? ''] ?? 'it is too predictable'
    throw invalidField(
      field,
      `is too easy to guess: ${why} (strength ${result.score} of 4, ${MIN_PASSWORD_SCORE} needed); a few unrelated words work well`,
    )
  }
}
