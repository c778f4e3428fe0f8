import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { onDescriptorsExhausted, storageError } from './problem.ts'

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

/** Every I/O fault answers 503 or 507 with Retry-After, never a 500 (DESIGN §6). */
describe('storage errors', () => {
  const cases: Array<[string, Error, number]> = [
    ['a full disk (SQLite)', withCode('database or disk is full', 'SQLITE_FULL'), 507],
    ['a full disk (a file)', withCode('ENOSPC: no space left on device', 'ENOSPC'), 507],
    ['a quota', withCode('EDQUOT: disk quota exceeded', 'EDQUOT'), 507],
    ['an I/O error (SQLite)', withCode('disk I/O error', 'SQLITE_IOERR_WRITE'), 503],
    ['an I/O error (a file)', withCode('EIO: i/o error, write', 'EIO'), 503],
    ['no descriptors left', withCode('EMFILE: too many open files', 'EMFILE'), 503],
    ['none left on the system', withCode('ENFILE: file table overflow', 'ENFILE'), 503],
    [
      'a database that cannot open',
      withCode('unable to open database file', 'SQLITE_CANTOPEN'),
      503,
    ],
    [
      'a commit after an I/O error rolled the transaction back',
      withCode('cannot commit - no transaction is active', 'SQLITE_ERROR'),
      503,
    ],
    ['a read-only file system', withCode('EROFS: read-only file system', 'EROFS'), 503],
  ]
  for (const [what, err, status] of cases)
    it(`answers ${status} for ${what}`, () => {
      const mapped = storageError(err)
      expect(mapped?.code).toBe(status === 507 ? 'STORAGE_FULL' : 'STORAGE_UNAVAILABLE')
      expect(Number(mapped?.headers?.['Retry-After'])).toBeGreaterThan(0)
    })

  it('maps what SQLite itself throws after an I/O error ended the transaction', () => {
    const db = new Database(':memory:')
    let thrown: unknown
    try {
      db.run('COMMIT')
    } catch (err) {
      thrown = err
    }
    expect(storageError(thrown)?.code).toBe('STORAGE_UNAVAILABLE')
  })

  it('leaves other errors alone', () => {
    expect(storageError(new Error('x is not a function'))).toBeNull()
    expect(storageError(withCode('constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'))).toBeNull()
  })

  it('says when the process ran out of descriptors, so idle handles are shed', () => {
    let told = 0
    onDescriptorsExhausted(() => told++)
    storageError(withCode('EMFILE: too many open files', 'EMFILE'))
    storageError(withCode('unable to open database file', 'SQLITE_CANTOPEN'))
    storageError(withCode('disk I/O error', 'SQLITE_IOERR'))
    expect(told).toBe(2)
  })
})
