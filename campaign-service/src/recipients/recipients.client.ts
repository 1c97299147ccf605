import {
  type CreateResultMessage,
  loadRecipientsProto,
  type RecipientMessage,
  toCreateResult,
  toFullRecipient,
} from '@outreach/contracts';
import {
  callUnary,
  fromServiceError,
  type InternalCaller,
  internalClient,
  jsonText,
} from '@outreach/platform';

/** A RecipientService client. */
export type RecipientClient = InstanceType<
  ReturnType<typeof loadRecipientsProto>['outreach']['v1']['RecipientService']
>;

/** Connects (lazily) to RecipientService at `host:port`, every call carrying the internal token. */
export function createRecipientClient(address: string, caller: InternalCaller): RecipientClient {
  return internalClient(loadRecipientsProto().outreach.v1.RecipientService, address, caller);
}

async function call<Res>(
  client: RecipientClient,
  method: string,
  request: unknown,
  requestId?: string,
): Promise<Res> {
  try {
    return await callUnary<unknown, Res>(client, method, request);
  } catch (err) {
    throw fromServiceError(err, requestId);
  }
}

/** Recipient operations the dashboard needs, forwarded to RecipientService (which owns the rules). */
export function recipientsForwarder(client: RecipientClient) {
  return {
    /** Lists a campaign's recipients. */
    list: async (
      projectId: string,
      campaignId: string,
      page: { limit: number; offset: number; active?: boolean; search?: string; countMatches?: boolean },
      requestId?: string,
    ) => {
      const res = await call<{ total: number; recipients: RecipientMessage[]; matched?: number }>(
        client,
        'ListRecipients',
        { projectId, campaignId, ...page },
        requestId,
      );
      return { total: res.total, matched: res.matched, recipients: res.recipients.map(toFullRecipient) };
    },
    /** Creates recipients; each item travels as the JSON the client sent. */
    create: async (projectId: string, campaignId: string, items: unknown[], requestId?: string) => {
      const res = await call<{
        created: number;
        failed: number;
        total: number;
        results: CreateResultMessage[];
      }>(
        client,
        'CreateRecipients',
        { projectId, campaignId, itemsJson: items.map((i) => jsonText(i)) },
        requestId,
      );
      return {
        created: res.created,
        failed: res.failed,
        total: res.total,
        results: res.results.map(toCreateResult),
      };
    },
    /** Fetches one recipient of the project. */
    get: async (projectId: string, recipientId: string, requestId?: string) =>
      toFullRecipient(
        await call<RecipientMessage>(client, 'GetRecipient', { projectId, recipientId }, requestId),
      ),
    /** Applies a PATCH body; as an operator's, `{isActive}` alone applies whatever the campaign's state. */
    update: async (projectId: string, recipientId: string, patch: unknown, requestId?: string) =>
      toFullRecipient(
        await call<RecipientMessage>(
          client,
          'UpdateRecipient',
          { projectId, recipientId, patchJson: jsonText(patch), byOperator: true },
          requestId,
        ),
      ),
    /** Deletes a recipient, as an operator's delete: whatever the campaign's state. */
    remove: (projectId: string, recipientId: string, requestId?: string) =>
      call<{ success: boolean; id: string }>(
        client,
        'DeleteRecipient',
        { projectId, recipientId, byOperator: true },
        requestId,
      ),
  };
}

/** The forwarder's type. */
export type RecipientsForwarder = ReturnType<typeof recipientsForwarder>;
