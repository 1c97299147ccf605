import { Server } from '@grpc/grpc-js';
import { loadRecipientsProto, serverChannelOptions } from '@outreach/contracts';
import { addGrpcHealth, type Lifecycle, type Logger, type ServiceMetrics } from '@outreach/platform';
import type { Pool } from 'pg';
import { recipientHandlers } from './recipients/recipients.handlers';
import type { RecipientService } from './recipients/recipients.service';

/** Builds the gRPC server (RecipientService + grpc.health.v1) from injected deps, without listening. */
export function buildGrpcServer(deps: {
  service: RecipientService;
  pool: Pool;
  lifecycle: Lifecycle;
  logger: Logger;
  metrics: ServiceMetrics;
}): Server {
  const server = new Server(serverChannelOptions());
  const proto = loadRecipientsProto();
  server.addService(
    proto.outreach.v1.RecipientService.service,
    recipientHandlers(deps.service, deps.logger, deps.metrics),
  );
  addGrpcHealth(server, deps.lifecycle);
  return server;
}
