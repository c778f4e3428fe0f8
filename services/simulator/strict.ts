import { darajaError, PHONE } from './model.ts'

/**
 * Checks Daraja makes in production that the sandbox relaxes, and checks of who a request names.
 * Each returns the Response to send, or null when the request is fine (as rules.ts does).
 */
type Body = Record<string, unknown>

const invalid = (field: string) => darajaError(400, '400.002.02', `Bad Request - Invalid ${field}`)
const str = (v: unknown) => (v === undefined || v === null ? '' : String(v))

/** Production URLs must be HTTPS ("on Sandbox you're allowed to simulate using HTTP"). */
export const httpsOnly = (field: string) => (b: Body) =>
  /^https:\/\//i.test(str(b[field])) ? null : invalid(field)

/**
 * Daraja's IdentifierType says what PartyA is: 1 a phone (MSISDN), 2 a till, 4 an organisation
 * shortcode. Transaction Status and Account Balance take 1, 2 or 4; a reversal's receiver is 11.
 */
export const identifierFits =
  (typeField: string, partyField: string, allowed: readonly string[]) => (b: Body) => {
    const type = str(b[typeField])
    if (!allowed.includes(type)) return invalid(typeField)
    const party = str(b[partyField])
    if (type === '1') return PHONE.test(party) ? null : invalid(partyField)
    return /^\d{5,9}$/.test(party) ? null : invalid(partyField)
  }

/** A repeated OriginatorConversationID is refused and not acted on again. */
export const duplicateOriginator = () =>
  darajaError(500, '500.002.1001', 'Duplicate OriginatorConversationID.')
