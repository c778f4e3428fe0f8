/**
 * The platform's fixed words (SPEC §2 and §6 enumerations), declared once and shared by the
 * services and the dashboard. Pure constants: safe to import into the browser bundle.
 */

/** The seven categorization categories of SPEC §2, exactly. */
export const CATEGORIES = [
  'Revenue',
  'Inventory',
  'Rent',
  'Salaries',
  'Transport',
  'Utilities',
  'Other',
] as const
export type Category = (typeof CATEGORIES)[number]

/** User roles of SPEC §2, most powerful first. */
export const ROLES = ['Admin', 'Manager', 'Analyst', 'Viewer'] as const
export type Role = (typeof ROLES)[number]

/** The six webhook events of SPEC §6. */
export const WEBHOOK_EVENTS = [
  'payment.success',
  'payment.failed',
  'transaction.categorized',
  'subscription.renewed',
  'statement.processed',
  'low.balance.alert',
] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

/** The reserved tenant whose Admin is the platform operator. */
export const PLATFORM_TENANT = 'platform'
