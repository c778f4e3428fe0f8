/**
 * What `mmp doctor` checks on an install, each answered with what to do about it. Read-only:
 * nothing here changes a file.
 */
export interface Check {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}
