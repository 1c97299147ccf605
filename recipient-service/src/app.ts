import type { Server } from '@grpc/grpc-js';
import { loadRecipientsProto } from '@outreach/contracts';
import {
  addGrpcHealth,
  createGrpcServer,
  type InternalTokenMode,
  type Lifecycle,
  type Logger,
  type ServiceMetrics,
} from '@outreach/platform';
import type { Pool } from 'pg';
import { recipientHandlers } from './recipients/recipients.handlers';
import type { RecipientService } from './recipients/recipients.service';

/**
 * Builds the gRPC server (RecipientService + grpc.health.v1) from injected deps, without
 * listening; with `internalToken`, every call but health checks must carry it (with
 * `internalTokenMode` `accept-missing`, a call carrying none passes too; with
 * `internalTokenAlsoAccepted`, one carrying that token, counted on `metrics`).
 */
export function buildGrpcServer(deps: {
  service: RecipientService;
  pool: Pool;
  lifecycle: Lifecycle;
  logger: Logger;
  metrics: ServiceMetrics;
  internalToken?: string;
  internalTokenMode?: InternalTokenMode;
  internalTokenAlsoAccepted?: string;
  /** GRPC_TLS_CLIENT_NAMES: the callers served, by the names of their certificates. */
  clientNames?: readonly string[];
}): Server {
  const server = createGrpcServer(deps.internalToken, deps.logger, undefined, deps.internalTokenMode, {
    alsoAccepted: deps.internalTokenAlsoAccepted,
    registry: deps.metrics.registry,
    clientNames: deps.clientNames,
  });
  const proto = loadRecipientsProto();
  server.addService(
    proto.outreach.v1.RecipientService.service,
    recipientHandlers(deps.service, deps.logger, deps.metrics),
  );
  addGrpcHealth(server, deps.lifecycle);
  return server;
}
