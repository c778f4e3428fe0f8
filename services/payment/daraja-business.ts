import { createDarajaTransport, type DarajaConfig, ProviderError } from './daraja-transport.ts'

/**
 * The rest of Daraja through the same transport (token, retries, errors) as STK push and B2C:
 *
 * - C2B Register URL: `POST /mpesa/c2b/v2/registerurl` `{ShortCode, ResponseType:
 *   "Completed"|"Cancelled", ConfirmationURL, ValidationURL}` → `{OriginatorCoversationID,
 *   ResponseCode: "0", ResponseDescription: "Success"}` (v2 confirmations carry a masked MSISDN).
 * - C2B simulate (sandbox only): `POST /mpesa/c2b/v1/simulate` `{ShortCode, CommandID, Amount,
 *   Msisdn, BillRefNumber}`.
 * - Transaction Status `POST /mpesa/transactionstatus/v1/query`, Account Balance
 *   `POST /mpesa/accountbalance/v1/query`, Reversal `POST /mpesa/reversal/v1/request`: each
 *   answers `{ConversationID, OriginatorConversationID, ResponseCode: "0", ResponseDescription}`
 *   and sends its result later to the ResultURL (or the QueueTimeOutURL).
 */
export interface DarajaBusiness {
  registerC2bUrls(input: {
    shortcode: string
    responseType: 'Completed' | 'Cancelled'
    confirmationUrl: string
    validationUrl: string
  }): Promise<{ ResponseCode: string; ResponseDescription: string }>
  simulateC2b(input: {
    shortcode: string
    commandId: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline'
    amount: number
    msisdn: string
    billRefNumber: string
  }): Promise<{ ResponseCode: string; ResponseDescription: string }>
  transactionStatus(input: AsyncInput & { transactionId: string }): Promise<AsyncAccepted>
  accountBalance(input: AsyncInput): Promise<AsyncAccepted>
  reversal(input: AsyncInput & { transactionId: string; amount: number }): Promise<AsyncAccepted>
}

/** What every request answered by a later result has in common. */
export interface AsyncInput {
  originatorConversationId: string
  /** The shortcode acted on (PartyA; ReceiverParty of a reversal). */
  shortcode: string
  /** Daraja's IdentifierType: 4 an organisation shortcode (paybill), 2 a till, 1 a phone. */
  identifierType: '1' | '2' | '4' | '11'
  remarks: string
  occasion?: string
  resultUrl: string
  timeoutUrl: string
  /** The shortcode's own initiator; default: the platform's (mpesa.b2c_initiator). */
  initiator?: { name: string; credential: string }
}

export interface AsyncAccepted {
  ConversationID: string
  OriginatorConversationID: string
  ResponseCode: string
  ResponseDescription: string
}

/** An API answered later at a ResultURL; `repeatable`: a query, safe to send again. */
interface AsyncApi {
  path: string
  command: string
  repeatable: boolean
}
const STATUS: AsyncApi = {
  path: '/mpesa/transactionstatus/v1/query',
  command: 'TransactionStatusQuery',
  repeatable: true,
}
const BALANCE: AsyncApi = {
  path: '/mpesa/accountbalance/v1/query',
  command: 'AccountBalance',
  repeatable: true,
}
const REVERSAL: AsyncApi = {
  path: '/mpesa/reversal/v1/request',
  command: 'TransactionReversal',
  repeatable: false,
}

/** A 200 with a non-zero ResponseCode is a refusal the provider did not act on. */
function accepted<T>(body: Record<string, unknown>, needs?: string): T {
  const code = body.ResponseCode
  if ((code !== undefined && String(code) !== '0') || (needs && !body[needs]))
    throw new ProviderError(
      200,
      String(code ?? ''),
      String(body.ResponseDescription ?? 'the provider refused the request'),
    )
  return body as T
}

export function createDarajaBusiness(cfg: DarajaConfig): DarajaBusiness {
  const { authed, unwrap } = createDarajaTransport(cfg)
  const post = async (path: string, payload: unknown, repeatable: boolean) =>
    unwrap(authed(path, payload, repeatable))
  const initiator = (own?: AsyncInput['initiator']) => ({
    Initiator: own?.name ?? cfg.initiatorName,
    SecurityCredential: own?.credential ?? cfg.securityCredential,
  })

  /**
   * A request answered later at its ResultURL: the initiator, the command, our id and the two
   * URLs, with the API's own fields; accepted only with a ConversationID.
   */
  const ask = async (
    api: AsyncApi,
    i: AsyncInput,
    fields: Record<string, unknown>,
  ): Promise<AsyncAccepted> => {
    const body = await post(
      api.path,
      {
        ...initiator(i.initiator),
        CommandID: api.command,
        OriginatorConversationID: i.originatorConversationId,
        ...fields,
        ResultURL: i.resultUrl,
        QueueTimeOutURL: i.timeoutUrl,
        Remarks: i.remarks,
      },
      api.repeatable,
    )
    return accepted(body, 'ConversationID')
  }

  return {
    async registerC2bUrls(i) {
      // Registering twice is refused in production ("URLs are already registered"): once only.
      const body = await post(
        '/mpesa/c2b/v2/registerurl',
        {
          ShortCode: i.shortcode,
          ResponseType: i.responseType,
          ConfirmationURL: i.confirmationUrl,
          ValidationURL: i.validationUrl,
        },
        false,
      )
      return accepted(body)
    },

    async simulateC2b(i) {
      const body = await post(
        '/mpesa/c2b/v1/simulate',
        {
          ShortCode: i.shortcode,
          CommandID: i.commandId,
          Amount: i.amount,
          Msisdn: i.msisdn,
          BillRefNumber: i.billRefNumber,
        },
        false,
      )
      return accepted(body)
    },

    transactionStatus: (i) =>
      ask(STATUS, i, {
        TransactionID: i.transactionId,
        PartyA: i.shortcode,
        IdentifierType: i.identifierType,
        Occasion: i.occasion ?? '',
      }),

    accountBalance: (i) =>
      ask(BALANCE, i, {
        PartyA: i.shortcode,
        IdentifierType: i.identifierType,
      }),

    reversal: (i) =>
      ask(REVERSAL, i, {
        TransactionID: i.transactionId,
        Amount: i.amount,
        ReceiverParty: i.shortcode,
        // Daraja's own spelling.
        RecieverIdentifierType: i.identifierType,
        Occasion: i.occasion ?? '',
      }),
  }
}
