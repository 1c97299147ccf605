import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { MAX_LINK_LOOKUPS, MAX_RECIPIENT_LOOKUPS, toCreateResponse } from '@outreach/contracts';
import {
  AppError,
  isFailure,
  type Logger,
  type ServiceMetrics,
  toAppError,
  toItemRefusal,
  unary,
} from '@outreach/platform';
import type { RecipientService } from './recipients.service';

interface Req {
  projectId: string;
  campaignId: string;
  recipientId: string;
  itemsJson: string[];
  wantBodyJson: boolean;
  idempotencyKey: string;
  fingerprint: string;
  limit: number;
  offset: number;
  active?: boolean;
  search?: string;
  countMatches: boolean;
  patchJson: string;
  byOperator: boolean;
  ids: string[];
  all: boolean;
  campaignIds: string[];
  token: string;
  lookups: { projectId: string; recipientId: string }[];
  tokens: string[];
}

/** The RecipientService gRPC handlers: thin adapters over the domain service. */
export function recipientHandlers(
  service: RecipientService,
  logger: Logger,
  metrics: ServiceMetrics,
): UntypedServiceImplementation {
  const methods: Record<string, (req: Req) => Promise<unknown>> = {
    CreateRecipients: async (r) => {
      const key = r.idempotencyKey ? { key: r.idempotencyKey, fingerprint: r.fingerprint } : undefined;
      const outcome = await service.createRecipients(r.projectId, r.campaignId, r.itemsJson, key);
      if (!r.wantBodyJson) return outcome;
      const { created, failed, total, replayed } = outcome;
      const bodyJson = JSON.stringify(toCreateResponse(outcome));
      return { created, failed, total, results: [], bodyJson, replayed: replayed === true };
    },
    ListRecipients: (r) =>
      service.listRecipients(r.projectId, r.campaignId, {
        limit: r.limit,
        offset: r.offset,
        active: r.active,
        search: r.search,
        countMatches: r.countMatches,
      }),
    GetRecipient: (r) => service.getRecipient(r.projectId, r.recipientId),
    // Each lookup answers as GetRecipient would; they share one query (the reads coalesce).
    GetRecipients: async (r) => {
      if (r.lookups.length > MAX_RECIPIENT_LOOKUPS) {
        throw new AppError('invalid_request', `At most ${MAX_RECIPIENT_LOOKUPS} lookups per call.`);
      }
      const results = await Promise.all(
        r.lookups.map((l) =>
          service.getRecipient(l.projectId, l.recipientId).then(
            (recipient) => ({ recipient }),
            (err: unknown) => {
              const refusal = toAppError(err);
              // A failure underneath (a store down) fails the call, logged once, as a lone read would.
              if (isFailure(refusal)) throw refusal;
              return toItemRefusal(refusal);
            },
          ),
        ),
      );
      return { results };
    },
    UpdateRecipient: (r) =>
      service.updateRecipient(r.projectId, r.recipientId, r.patchJson, { byOperator: r.byOperator }),
    DeleteRecipient: (r) => service.deleteRecipient(r.projectId, r.recipientId, { byOperator: r.byOperator }),
    BulkDeleteRecipients: (r) => service.bulkDelete(r.projectId, { ids: r.ids, all: r.all }),
    CountRecipients: async (r) => ({ counts: await service.countRecipients(r.projectId, r.campaignIds) }),
    ResolveLink: (r) => service.resolveLink(r.token),
    // Each token answers as ResolveLink would (no recipient where it says not_found); one query.
    ResolveLinks: async (r) => {
      if (r.tokens.length > MAX_LINK_LOOKUPS) {
        throw new AppError('invalid_request', `At most ${MAX_LINK_LOOKUPS} tokens per call.`);
      }
      return { results: await service.resolveLinks(r.tokens) };
    },
  };
  return Object.fromEntries(
    Object.entries(methods).map(([name, fn]) => [name, unary<Req, unknown>(logger, name, fn, metrics)]),
  );
}
