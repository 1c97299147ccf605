import { type Client, Metadata } from '@grpc/grpc-js';
import { loadCampaignsProto, loadHealthProto, loadRecipientsProto } from '@outreach/contracts';
import {
  callUnary,
  type ForwardedContext,
  fromServiceError,
  grpcHealthCheck,
  type InternalCaller,
  internalClient,
} from '@outreach/platform';
import { coalescedRecipientGets, type GetRecipient } from './recipient-reads';

/**
 * A typed unary call to one backend on behalf of a request (its id and trace context forwarded):
 * request in, response out, failures already mapped to AppError.
 */
export type Call = <Res>(method: string, request: object, forwarded?: ForwardedContext) => Promise<Res>;

/** The two gRPC backends the gateway talks to. */
export interface Backends {
  recipients: Call;
  campaigns: Call;
  /** One recipient by id; reads that arrive together share one call (`coalescedRecipientGets`). */
  getRecipient: GetRecipient;
  /** grpc.health.v1 checks; true when the backend answers SERVING. */
  recipientsHealthy: () => Promise<boolean>;
  campaignsHealthy: () => Promise<boolean>;
  close: () => void;
}

/**
 * Wraps a client so every call has the deadline, forwards the request id and the client's trace
 * context, and maps errors back. The trace context goes as the client sent it, so a trace begun
 * outside (a caller's, a service mesh's) follows the request even where this instance exports no
 * traces; where it does, its gRPC instrumentation writes its own span's context over it.
 */
function caller(client: Client, deadlineMs: number): Call {
  return async <Res>(method: string, request: object, forwarded?: ForwardedContext) => {
    const metadata = new Metadata();
    if (forwarded) {
      metadata.set('x-request-id', forwarded.requestId);
      if (forwarded.traceparent) metadata.set('traceparent', forwarded.traceparent);
      if (forwarded.tracestate) metadata.set('tracestate', forwarded.tracestate);
    }
    try {
      return await callUnary<object, Res>(client, method, request, { deadlineMs, metadata });
    } catch (err) {
      throw fromServiceError(err, forwarded?.requestId);
    }
  };
}

/**
 * Connects (lazily, as grpc-js does) to both backends as `internal` says (TLS or plaintext),
 * every call carrying the internal token (INTERNAL_TOKEN) when there is one.
 */
export function createBackends(
  addrs: { recipients: string; campaigns: string },
  deadlineMs: number,
  internal: InternalCaller = { token: undefined },
): Backends {
  const recipients = internalClient(
    loadRecipientsProto().outreach.v1.RecipientService,
    addrs.recipients,
    internal,
  );
  const campaigns = internalClient(
    loadCampaignsProto().outreach.v1.CampaignService,
    addrs.campaigns,
    internal,
  );
  const Health = loadHealthProto().grpc.health.v1.Health;
  const recipientsHealth = internalClient(Health, addrs.recipients, internal, {});
  const campaignsHealth = internalClient(Health, addrs.campaigns, internal, {});
  const healthDeadline = Math.min(deadlineMs, 2000);
  const recipientsCall = caller(recipients, deadlineMs);
  return {
    recipients: recipientsCall,
    getRecipient: coalescedRecipientGets(recipients, recipientsCall, deadlineMs),
    campaigns: caller(campaigns, deadlineMs),
    recipientsHealthy: grpcHealthCheck(recipientsHealth, healthDeadline),
    campaignsHealthy: grpcHealthCheck(campaignsHealth, healthDeadline),
    close: () => {
      for (const c of [recipients, campaigns, recipientsHealth, campaignsHealth]) c.close();
    },
  };
}
