import { describe, expect, it } from 'bun:test'
import { eventually } from '../kernel/testing.ts'
import { targetsOf } from './targets.ts'

describe('attempt targets', () => {
  const policy = { allowInsecure: false, allowHosts: [] }

  it('are checked once for the attempts of a second, and checked again after it', async () => {
    let answer = ['93.184.216.34']
    let lookups = 0
    const resolve = async () => {
      lookups++
      return answer
    }
    const url = 'https://hooks.example/in'
    const first = await targetsOf(url, policy, resolve)
    expect(first.urls.map(String)).toEqual(['https://93.184.216.34/in'])
    expect(await targetsOf(url, policy, resolve)).toBe(first)
    expect(await targetsOf(url, policy, resolve)).toBe(first)
    expect(lookups).toBe(1)
    // Another resolver or policy is another check.
    await targetsOf(url, { ...policy }, resolve)
    expect(lookups).toBe(2)
    // The name now points inside: refused once the second is over.
    answer = ['10.0.0.1']
    const refusal = await eventually(
      () =>
        targetsOf(url, policy, resolve).then(
          () => null,
          (err: Error) => err.message,
        ),
      5000,
      'the re-pointed name refused',
    )
    expect(refusal).toContain('10.0.0.1')
  })

  it('try IPv4 addresses first, at most four, and keep the host as registered', async () => {
    const resolve = async () => [
      '2606:4700::1',
      '93.184.216.34',
      '93.184.216.35',
      '2606:4700::2',
      '1.1.1.1',
    ]
    const t = await targetsOf('https://hooks.example:8443/in?x=1', policy, resolve)
    expect(t.host).toBe('hooks.example')
    expect(t.original.host).toBe('hooks.example:8443')
    expect(t.urls.map(String)).toEqual([
      'https://93.184.216.34:8443/in?x=1',
      'https://93.184.216.35:8443/in?x=1',
      'https://1.1.1.1:8443/in?x=1',
      'https://[2606:4700::1]:8443/in?x=1',
    ])
  })
})
