import {
  COMMON_CONFIG,
  type ConfigOf,
  GRPC_TLS_CLIENT_CONFIG,
  NATS_STREAM_CONFIG,
  PROXY_CONFIG,
  type VarSpec,
} from '@outreach/platform';

/** Everything the gateway reads from the environment. */
export const CONFIG_SPEC = {
  ...COMMON_CONFIG,
  ...NATS_STREAM_CONFIG,
  ...GRPC_TLS_CLIENT_CONFIG,
  GATEWAY_PORT: {
    type: 'int',
    default: 8080,
    min: 0,
    max: 65535,
    doc: 'public HTTP port (0 picks a free one)',
  },
  HOST: { type: 'string', default: '0.0.0.0', doc: 'interface to listen on' },
  RECIPIENT_SERVICE_ADDR: {
    type: 'string',
    default: '127.0.0.1:50051',
    doc: 'host:port of the recipient-service gRPC server',
  },
  CAMPAIGN_SERVICE_ADDR: {
    type: 'string',
    default: '127.0.0.1:50052',
    doc: 'host:port of the campaign-service gRPC server',
  },
  GRPC_DEADLINE_MS: { type: 'int', default: 5000, min: 50, max: 60000, doc: 'deadline of each backend call' },
  ...PROXY_CONFIG,
} as const satisfies Record<string, VarSpec>;

/** The gateway's typed configuration. */
export type GatewayConfig = ConfigOf<typeof CONFIG_SPEC>;
