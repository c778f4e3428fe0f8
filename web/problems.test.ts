import { describe, expect, it } from 'bun:test'
import { statusOf } from '../schema/errors.ts'
import { localPhone } from './format.ts'
import { fieldSentence, OWNER_WORDS, ownerSentence, plainDetail } from './problems.ts'

describe('problems in the owner’s words', () => {
  it('has a sentence for every problem code the platform can answer', () => {
    const codes = Object.keys(statusOf)
    expect(codes.length).toBeGreaterThan(20)
    const missing = codes.filter((c) => !OWNER_WORDS[c as keyof typeof OWNER_WORDS])
    expect(missing).toEqual([])
    expect(Object.keys(OWNER_WORDS).sort()).toEqual([...codes].sort())
  })

  it('says what happened and what to do, without HTTP or programming words', () => {
    for (const [code, sentence] of Object.entries(OWNER_WORDS)) {
      // Two sentences at least: what happened, then what to do.
      expect({
        code,
        sentences: sentence.split(/[.!?](\s|$)/).filter((s) => s.trim()).length >= 2,
      }).toEqual({
        code,
        sentences: true,
      })
      expect({ code, sentence }).not.toMatchObject({
        sentence: expect.stringMatching(
          /\b(?:HTTP|[45]\d\d|payload|request body|idempotency|JSON|schema|regex|null|undefined|endpoint|upstream)\b|_/i,
        ),
      })
    }
  })

  it('falls back on the status for a problem without a code, and on the network for none', () => {
    expect(ownerSentence(undefined, 401)).toBe(OWNER_WORDS.UNAUTHENTICATED)
    expect(ownerSentence('SOMETHING_NEW', 503)).toBe(OWNER_WORDS.SERVICE_UNAVAILABLE)
    expect(ownerSentence(undefined, undefined)).toContain('internet connection')
  })

  it('turns a schema’s pattern message into what the field wants', () => {
    const regex = "Expected string to match '^[\\s\\-().]*(?:\\+?254|0)?[17]\\d{8}$'"
    expect(fieldSentence('/phone_number', regex)).toBe(
      'Phone: type a Kenyan M-PESA number, such as 0712 345 678 or 254712345678.',
    )
    expect(fieldSentence('amount', 'Expected number')).toContain('whole number of shillings')
    expect(fieldSentence('email', 'is already a member')).toBe('Email: is already a member')
  })

  it('keeps an API detail only when it reads as words', () => {
    expect(plainDetail('send its password in the `password` field')).toBeNull()
    expect(plainDetail("Expected string to match '^\\d+$'")).toBeNull()
    expect(plainDetail('the plan allows 3 users')).toBe('the plan allows 3 users')
  })

  it('shows phones in the local form, hidden digits kept hidden', () => {
    expect(localPhone('254712345678')).toBe('0712 345 678')
    expect(localPhone('+254 712 345 678')).toBe('0712 345 678')
    expect(localPhone('712345678')).toBe('0712 345 678')
    expect(localPhone('0112345678')).toBe('0112 345 678')
    expect(localPhone('2547 ***** 601')).toBe('07** *** 601')
    expect(localPhone('25472****108')).toBe('0720 *** 108'.replace('0720', '072*'))
    expect(localPhone('KPLC')).toBe('KPLC')
    expect(localPhone(null)).toBe('—')
  })
})
