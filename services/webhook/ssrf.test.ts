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
})
