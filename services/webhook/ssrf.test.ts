import { describe, expect, it } from 'bun:test'
import { checkDestination, DestinationRefused } from './ssrf.ts'

const prod = { allowInsecure: false, allowHosts: [] as string[] }
const dev = { allowInsecure: true, allowHosts: [] as string[] }
const fixed = (map: Record<string, string[]>) => async (h: string) => map[h] ?? []

describe('webhook destinations', () => {
  it.each([
    'https://127.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://10.1.2.3/x',
    'https://192.168.1.1/x',
    'https://172.16.0.1/x',
    'https://100.64.0.1/x',
    'https://0.0.0.0/x',
    'https://[::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://[::ffff:a9fe:a9fe]/x',
    // IPv4-compatible, NAT64 and 6to4 forms of refused IPv4 addresses
    'https://[::127.0.0.1]/',
    'https://[::7f00:1]/x',
    'https://[::10.0.0.1]/x',
    'https://[::169.254.169.254]/x',
    'https://[64:ff9b::7f00:1]/',
    'https://[64:ff9b::127.0.0.1]/x',
    'https://[64:ff9b::a9fe:a9fe]/x',
    'https://[64:ff9b::c0a8:101]/x',
    'https://[2002:7f00:1::]/',
    'https://[2002:a00:1::1]/x',
    'https://[2002:a9fe:a9fe::]/x',
    'https://[::ffff:0:7f00:1]/x',
    'https://[64:ff9b:1::7f00:1]/x',
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
    'https://[fd00::1]/x',
    'https://[fe80::1]/x',
    'http://example.com/x',
    'ftp://example.com/x',
    'https://user:pw@example.com/x',
  ])('refuses %s in production mode', async (url) => {
    await expect(checkDestination(url, prod, { resolve: fixed({}) })).rejects.toBeInstanceOf(
      DestinationRefused,
    )
  })

  it('refuses names that resolve to internal addresses, any of them', async () => {
    const resolve = fixed({
      localhost: ['127.0.0.1', '::1'],
      'evil.test': ['93.184.216.34', '10.0.0.5'],
      'meta.test': ['169.254.169.254'],
    })
    for (const url of ['https://localhost/x', 'https://evil.test/x', 'https://meta.test/x'])
      await expect(checkDestination(url, prod, { resolve })).rejects.toThrow(DestinationRefused)
  })

  it('refuses names resolving to an IPv6 form of an internal IPv4 address', async () => {
    const resolve = fixed({
      'compat.test': ['::7f00:1'],
      'nat64.test': ['64:ff9b::a00:5'],
      '6to4.test': ['2002:a9fe:a9fe::1'],
    })
    for (const host of Object.keys({ 'compat.test': 1, 'nat64.test': 1, '6to4.test': 1 }))
      await expect(checkDestination(`https://${host}/x`, prod, { resolve })).rejects.toThrow(
        /embedded in/,
      )
  })

  it('accepts NAT64 and 6to4 forms of a public IPv4 address', async () => {
    for (const url of ['https://[64:ff9b::5db8:d822]/x', 'https://[2002:5db8:d822::1]/x'])
      await expect(checkDestination(url, prod)).resolves.toBeTruthy()
  })

  it('accepts public https hosts and allow-listed internal ones', async () => {
    const resolve = fixed({ 'hooks.test': ['93.184.216.34'], 'internal.corp': ['10.9.8.7'] })
    expect((await checkDestination('https://hooks.test/x', prod, { resolve })).addresses).toEqual([
      '93.184.216.34',
    ])
    const allow = { allowInsecure: false, allowHosts: ['internal.corp', '10.50.0.0/16'] }
    await expect(
      checkDestination('https://internal.corp/x', allow, { resolve }),
    ).resolves.toBeTruthy()
    await expect(checkDestination('https://10.50.1.1/x', allow, { resolve })).resolves.toBeTruthy()
    await expect(checkDestination('https://10.51.1.1/x', allow, { resolve })).rejects.toThrow()
  })

  it('allows plain http only to loopback in insecure mode', async () => {
    await expect(checkDestination('http://127.0.0.1:9/x', dev)).resolves.toBeTruthy()
    await expect(
      checkDestination('http://localhost:9/x', dev, {
        resolve: fixed({ localhost: ['127.0.0.1'] }),
      }),
    ).resolves.toBeTruthy()
    await expect(
      checkDestination('http://hooks.test/x', dev, {
        resolve: fixed({ 'hooks.test': ['1.2.3.4'] }),
      }),
    ).rejects.toThrow('https')
    await expect(checkDestination('https://10.0.0.1/x', dev)).rejects.toThrow('private')
  })

  it('accepts an unresolvable name only when asked to', async () => {
    await expect(
      checkDestination('https://nowhere.invalid/x', prod, {
        resolve: fixed({}),
        unresolvable: 'allow',
      }),
    ).resolves.toMatchObject({ addresses: [] })
    await expect(
      checkDestination('https://nowhere.invalid/x', prod, { resolve: fixed({}) }),
    ).rejects.toThrow('does not resolve')
  })

  it('answers a repeated check the same way, apart per policy, scheme and host name', async () => {
    const resolve = fixed({ 'internal.corp': ['10.9.8.7'], 'other.corp': ['10.9.8.7'] })
    const allow = { allowInsecure: false, allowHosts: ['internal.corp'] }
    for (let i = 0; i < 3; i++) {
      await expect(
        checkDestination('https://internal.corp/x', allow, { resolve }),
      ).resolves.toBeTruthy()
      // The same address under another name, or under a policy without the entry, stays refused.
      await expect(checkDestination('https://other.corp/x', allow, { resolve })).rejects.toThrow(
        'private',
      )
      await expect(checkDestination('https://internal.corp/x', prod, { resolve })).rejects.toThrow(
        'private',
      )
      await expect(checkDestination('http://127.0.0.1:9/x', dev)).resolves.toBeTruthy()
      await expect(checkDestination('https://127.0.0.1:9/x', prod)).rejects.toThrow('loopback')
      await expect(checkDestination('http://127.0.0.1:9/x', prod)).rejects.toThrow('https')
    }
  })
})
