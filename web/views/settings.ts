import { can } from '../api.ts'
import { apiKeysPanel } from './settings-api-keys.ts'
import { billingPanel } from './settings-billing.ts'
import { c2bPanel } from './settings-c2b.ts'
import { rulesPanel } from './settings-rules.ts'
import { usersPanel } from './settings-users.ts'
import { webhooksPanel } from './settings-webhooks.ts'

/**
 * Admins: till and paybill, users, API keys, webhooks, subscription and invoices, rules.
 * Managers: rules only.
 */
export async function settingsView(root: HTMLElement, tenantId: string): Promise<void> {
  const panels: Promise<HTMLElement>[] = []
  if (can('admin'))
    panels.push(
      c2bPanel(tenantId),
      usersPanel(tenantId),
      apiKeysPanel(tenantId),
      webhooksPanel(tenantId),
      billingPanel(tenantId),
    )
  if (can('manage')) panels.push(rulesPanel(tenantId))
  root.append(...(await Promise.all(panels)))
}
