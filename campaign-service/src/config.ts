import {
  APPLIED_RECORDS_CONFIG,
  COMMON_CONFIG,
  type ConfigOf,
  GRPC_TLS_CLIENT_CONFIG,
  GRPC_TLS_SERVER_CONFIG,
  NATS_STREAM_CONFIG,
  PROXY_CONFIG,
  type VarSpec,
} from '@outreach/platform';

/** Environment of the campaign service: the common stores plus its own ports and secrets. */
export const CONFIG_SPEC = {
  ...COMMON_CONFIG,
  ...NATS_STREAM_CONFIG,
  ...GRPC_TLS_CLIENT_CONFIG,
  ...GRPC_TLS_SERVER_CONFIG,
  ...APPLIED_RECORDS_CONFIG,
  // The dashboard counts failed sign-ins by client address too.
  ...PROXY_CONFIG,
  DASHBOARD_PORT: { type: 'int', default: 8082, min: 0, max: 65535, doc: 'admin HTTP API port' },
  CAMPAIGN_GRPC_PORT: { type: 'int', default: 50052, min: 0, max: 65535, doc: 'CampaignService gRPC port' },
  HOST: { type: 'string', default: '0.0.0.0', doc: 'address to listen on' },
  OPERATOR_PROJECT_LIMIT: {
    type: 'int',
    default: 100,
    min: 1,
    max: 100000,
    doc: "the most projects an operator may manage and still create another in the dashboard (the admin API's projects and memberships are not limited)",
  },
  ADMIN_TOKEN: {
    type: 'string',
    secret: true,
    doc: 'bearer token of the admin API (required in production)',
  },
  RECIPIENT_SERVICE_ADDR: {
    type: 'string',
    default: '127.0.0.1:50051',
    doc: 'host:port of RecipientService',
  },
  SCHEDULER_INTERVAL_MS: {
    type: 'int',
    default: 1000,
    min: 10,
    max: 60000,
    doc: 'how often the lifecycle scheduler and outbox relay sweep',
  },
  STATE_STREAM_CHECK_MS: {
    type: 'int',
    default: 10000,
    min: 100,
    max: 600000,
    doc: 'how often the service checks that the state stream is the one its snapshots were published to',
  },
} as const satisfies Record<string, VarSpec>;

/** The parsed configuration. */
export type CampaignConfig = ConfigOf<typeof CONFIG_SPEC>;
