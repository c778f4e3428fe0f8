import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { webhookEventNames } from '../schema/webhook-events.ts'

/** docs/webhooks.md lists the events of the registry, each once, and no other. */
describe('docs/webhooks.md', () => {
  it('lists exactly the events schema/webhook-events.ts declares', () => {
    const text = readFileSync(join(import.meta.dir, '..', 'docs', 'webhooks.md'), 'utf8')
    const listed = [...text.matchAll(/^\| `([a-z]+(?:\.[a-z]+)+)` +\|/gm)].map((m) => m[1])
    expect(listed).toEqual([...webhookEventNames])
  })
})
