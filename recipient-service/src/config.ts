import {
  APPLIED_RECORDS_CONFIG,
  COMMON_CONFIG,
  type ConfigOf,
  GRPC_TLS_CLIENT_CONFIG,
  GRPC_TLS_SERVER_CONFIG,
  NATS_STREAM_CONFIG,
  type VarSpec,
} from '@outreach/platform';

/** Every environment variable the recipient service reads. */
export const CONFIG_SPEC = {
  ...COMMON_CONFIG,
  ...NATS_STREAM_CONFIG,
  ...GRPC_TLS_CLIENT_CONFIG,
  ...GRPC_TLS_SERVER_CONFIG,
  RECIPIENT_GRPC_PORT: {
    type: 'int',
    default: 50051,
    min: 0,
    max: 65535,
    doc: 'gRPC port (0 picks a free one)',
  },
  HOST: { type: 'string', default: '0.0.0.0', doc: 'address to listen on' },
  CAMPAIGN_SERVICE_ADDR: {
    type: 'string',
    default: '127.0.0.1:50052',
    doc: 'host:port of the campaign service (gRPC), asked for campaigns not yet replicated',
  },
  ...APPLIED_RECORDS_CONFIG,
  SAFETY_RULES_FILE: {
    type: 'string',
    doc: 'optional JSON file with extra instruction safety rules [{id, description, pattern, flags?}]',
  },
} as const satisfies Record<string, VarSpec>;

export type RecipientConfig = ConfigOf<typeof CONFIG_SPEC>;
