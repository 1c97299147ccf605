import type { ServerUnaryCall, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { type Logger, type ServiceMetrics, unary } from '@outreach/platform';
import type { RecipientService } from './recipients.service';

type Handler = (call: ServerUnaryCall<Req, unknown>, callback: sendUnaryData<unknown>) => void;

const STATUS_NAMES = Object.fromEntries(Object.entries(GrpcStatus).map(([name, code]) => [code, name]));

/** Counts and times every call by method and status code, around the unary adapter. */
function instrumented(metrics: ServiceMetrics, method: string, handler: Handler): Handler {
  return (call, callback) => {
    const end = metrics.grpcDuration.startTimer({ method });
    handler(call, (err, res) => {
      end();
      const code = err ? (err.code ?? GrpcStatus.UNKNOWN) : GrpcStatus.OK;
      metrics.grpcRequests.inc({ method, code: STATUS_NAMES[code] ?? String(code) });
      callback(err, res);
    });
  };
}

interface Req {
  projectId: string;
  campaignId: string;
  recipientId: string;
  itemsJson: string[];
  limit: number;
  offset: number;
  active?: boolean;
  patchJson: string;
  ids: string[];
  all: boolean;
  campaignIds: string[];
  token: string;
}

/** The RecipientService gRPC handlers: thin adapters over the domain service. */
export function recipientHandlers(
  service: RecipientService,
  logger: Logger,
  metrics: ServiceMetrics,
): UntypedServiceImplementation {
  const methods: Record<string, (req: Req) => Promise<unknown>> = {
    CreateRecipients: (r) => service.createRecipients(r.projectId, r.campaignId, r.itemsJson),
    ListRecipients: (r) =>
      service.listRecipients(r.projectId, r.campaignId, {
        limit: r.limit,
        offset: r.offset,
        active: r.active,
      }),
    GetRecipient: (r) => service.getRecipient(r.projectId, r.recipientId),
    UpdateRecipient: (r) => service.updateRecipient(r.projectId, r.recipientId, r.patchJson),
    DeleteRecipient: (r) => service.deleteRecipient(r.projectId, r.recipientId),
    BulkDeleteRecipients: (r) => service.bulkDelete(r.projectId, { ids: r.ids, all: r.all }),
    CountRecipients: async (r) => ({ counts: await service.countRecipients(r.projectId, r.campaignIds) }),
    ResolveLink: (r) => service.resolveLink(r.token),
  };
  return Object.fromEntries(
    Object.entries(methods).map(([name, fn]) => [
      name,
      instrumented(metrics, name, unary<Req, unknown>(logger, name, (req) => fn(req)) as Handler),
    ]),
  );
}
