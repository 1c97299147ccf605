import path from 'node:path';
import { type GrpcObject, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { ProtoGrpcType as CampaignsGrpc } from './generated/campaigns';
import type { ProtoGrpcType as HealthGrpc } from './generated/health';
import type { ProtoGrpcType as RecipientsGrpc } from './generated/recipients';

/**
 * proto-loader options used at run time; `scripts/gen-protos.js` passes the same ones
 * to the type generator so that the generated types describe the real objects.
 * Unset `optional` fields arrive as undefined (they are oneof members), every other
 * field with its proto3 default.
 */
export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/**
 * Channel options of every gRPC client and server. A 1 MiB create request can expand into a
 * response of tens of MiB (placeholders substitute up to 500 words of 500-character metadata
 * per recipient), far past grpc-js's 4 MiB default.
 */
export const GRPC_CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': 128 * 1024 * 1024,
  'grpc.max_send_message_length': 128 * 1024 * 1024,
} as const;

// The methods that only read (VerifyApiKey writes lastUsedAt at most once a minute: repeating it
// changes nothing).
const READS: Record<string, readonly string[]> = {
  'outreach.v1.RecipientService': [
    'ListRecipients',
    'GetRecipient',
    'GetRecipients',
    'CountRecipients',
    'ResolveLink',
    'ResolveLinks',
  ],
  'outreach.v1.CampaignService': ['ListCampaigns', 'GetCampaign', 'GetAllowance', 'VerifyApiKey'],
};

// A read is tried once more after UNAVAILABLE: a call sent just as the server ends an idle
// connection for its age (see serverChannelOptions) fails so, and grpc-js does not repeat a call
// that may have reached the server. A write is never repeated: it may have been applied.
const RETRY_READS = {
  name: Object.entries(READS).flatMap(([service, methods]) => methods.map((method) => ({ service, method }))),
  retryPolicy: {
    maxAttempts: 2,
    initialBackoff: '0.02s',
    maxBackoff: '0.1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  },
};
const PICK_FIRST_CONFIG = JSON.stringify({ methodConfig: [RETRY_READS] });
// Balances calls over every address a name resolves to; see clientChannelOptions.
const ROUND_ROBIN_CONFIG = JSON.stringify({
  loadBalancingConfig: [{ round_robin: {} }],
  methodConfig: [RETRY_READS],
});
// grpc-js resolves a name again only when a connection ends, and then at most this often (30 s by
// default): a client learns of pods a rollout started within seconds of its next reconnect.
const MIN_TIME_BETWEEN_RESOLUTIONS_MS = 5000;

/** How long a server keeps a client's connection, and how long its calls may then still run. */
export const GRPC_MAX_CONNECTION_AGE_MS = 60_000;
// As long as the longest deadline a client may set (the gateway's GRPC_DEADLINE_MS, at most 60 s).
const MAX_CONNECTION_AGE_GRACE_MS = 60_000;

/**
 * The channel options of every gRPC server: each client connection is ended (GOAWAY, its calls
 * finishing) after about `maxConnectionAgeMs`. A client connects again, and so spreads over pods
 * added since: through a ClusterIP Service kube-proxy picks a pod per connection, and a headless
 * name is resolved again when a connection ends. Without an age, every client kept the pods it
 * first connected to, and pods the autoscaler added got no calls from it.
 */
export function serverChannelOptions(
  maxConnectionAgeMs = GRPC_MAX_CONNECTION_AGE_MS,
): Record<string, number> {
  return {
    ...GRPC_CHANNEL_OPTIONS,
    'grpc.max_connection_age_ms': maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': MAX_CONNECTION_AGE_GRACE_MS,
  };
}

/**
 * The channel options of a client of `target`. A `dns:` name (the chart's headless Services,
 * `config.grpcTarget: headless`) or an address list resolves to every ready pod: calls go round
 * robin over them, where grpc-js's default (pick_first) would send all of a client's calls to
 * one. A plain host:port (a ClusterIP Service) keeps pick_first, which connects again on the next
 * call after an outage rather than on round robin's growing backoff. Either way a read that fails
 * UNAVAILABLE is tried once more (see RETRY_READS).
 */
export function clientChannelOptions(target: string): Record<string, string | number> {
  return /^(dns|ipv4|ipv6):/.test(target)
    ? {
        ...GRPC_CHANNEL_OPTIONS,
        'grpc.service_config': ROUND_ROBIN_CONFIG,
        'grpc.dns_min_time_between_resolutions_ms': MIN_TIME_BETWEEN_RESOLUTIONS_MS,
      }
    : { ...GRPC_CHANNEL_OPTIONS, 'grpc.service_config': PICK_FIRST_CONFIG };
}

/** Folder of the .proto files (the repository's `protos/`). */
export const PROTO_ROOT = path.resolve(__dirname, '../../../protos');

function load<T>(file: string): T {
  const definition = loadSync(path.join(PROTO_ROOT, file), {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [PROTO_ROOT],
  });
  return loadPackageDefinition(definition) as GrpcObject as T;
}

/** The outreach.v1 recipient contract. */
export function loadRecipientsProto(): RecipientsGrpc {
  return load<RecipientsGrpc>('outreach/v1/recipients.proto');
}

/** The outreach.v1 campaign contract. */
export function loadCampaignsProto(): CampaignsGrpc {
  return load<CampaignsGrpc>('outreach/v1/campaigns.proto');
}

/** The standard grpc.health.v1 contract. */
export function loadHealthProto(): HealthGrpc {
  return load<HealthGrpc>('grpc/health/v1/health.proto');
}

/** Most lookups one GetRecipients call may carry (the service refuses more). */
export const MAX_RECIPIENT_LOOKUPS = 100;

/** Most tokens one ResolveLinks call may carry (the service refuses more). */
export const MAX_LINK_LOOKUPS = 100;
