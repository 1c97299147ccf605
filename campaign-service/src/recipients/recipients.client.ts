import { credentials } from '@grpc/grpc-js';
import { loadRecipientsProto } from '@outreach/contracts';
import { callUnary, fromServiceError } from '@outreach/platform';

/** A RecipientService client. */
export type RecipientClient = InstanceType<
  ReturnType<typeof loadRecipientsProto>['outreach']['v1']['RecipientService']
>;

/** Connects (lazily) to RecipientService at `host:port`. */
export function createRecipientClient(address: string): RecipientClient {
  const proto = loadRecipientsProto();
  return new proto.outreach.v1.RecipientService(address, credentials.createInsecure());
}

// proto-loader adds `_field` markers for proto3 optional fields; they are not part of the API.
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !k.startsWith('_'))
      .map(([k, v]) => [k, clean(v)]),
  );
}

async function call<Res>(
  client: RecipientClient,
  method: string,
  request: unknown,
  requestId?: string,
): Promise<Res> {
  try {
    return clean(await callUnary<unknown, Res>(client, method, request)) as Res;
  } catch (err) {
    throw fromServiceError(err, requestId);
  }
}

/** Recipient operations the dashboard needs, forwarded to RecipientService (which owns the rules). */
export function recipientsForwarder(client: RecipientClient) {
  return {
    /** Lists a campaign's recipients. */
    list: (
      projectId: string,
      campaignId: string,
      page: { limit: number; offset: number; active?: boolean },
      requestId?: string,
    ) =>
      call<{ total: number; recipients: unknown[] }>(
        client,
        'ListRecipients',
        { projectId, campaignId, ...page },
        requestId,
      ),
    /** Creates recipients; each item travels as the JSON the client sent. */
    create: (projectId: string, campaignId: string, items: unknown[], requestId?: string) =>
      call<{ created: number; failed: number; total: number; results: unknown[] }>(
        client,
        'CreateRecipients',
        { projectId, campaignId, itemsJson: items.map((i) => JSON.stringify(i)) },
        requestId,
      ),
    /** Fetches one recipient of the project. */
    get: (projectId: string, recipientId: string, requestId?: string) =>
      call<{ id: string; campaignId: string }>(client, 'GetRecipient', { projectId, recipientId }, requestId),
    /** Applies a PATCH body. */
    update: (projectId: string, recipientId: string, patch: unknown, requestId?: string) =>
      call<unknown>(
        client,
        'UpdateRecipient',
        { projectId, recipientId, patchJson: JSON.stringify(patch) },
        requestId,
      ),
    /** Deletes a recipient. */
    remove: (projectId: string, recipientId: string, requestId?: string) =>
      call<{ success: boolean; id: string }>(
        client,
        'DeleteRecipient',
        { projectId, recipientId },
        requestId,
      ),
  };
}

/** The forwarder's type. */
export type RecipientsForwarder = ReturnType<typeof recipientsForwarder>;
