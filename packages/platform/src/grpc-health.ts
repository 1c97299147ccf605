import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import type { Lifecycle } from './lifecycle';

/**
 * Serves grpc.health.v1 on `server`: SERVING until shutdown begins, NOT_SERVING from then on, so
 * that Kubernetes' gRPC probes take a draining replica out of service. Shared stores out of reach
 * leave it SERVING, for the reasons `healthRoutes` gives: each call then fails by itself, as
 * `unavailable`.
 */
export function addGrpcHealth(server: Server, lifecycle: Lifecycle): void {
  const proto = loadHealthProto();
  const status = async (): Promise<'SERVING' | 'NOT_SERVING'> =>
    lifecycle.isDraining ? 'NOT_SERVING' : 'SERVING';
  server.addService(proto.grpc.health.v1.Health.service, {
    Check: (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<{ status: string }>) => {
      status().then((s) => callback(null, { status: s }));
    },
    Watch: (call: ServerWritableStream<unknown, { status: string }>) => {
      // Watch is optional for probes; answer once with the current status and end.
      status().then((s) => {
        call.write({ status: s });
        call.end();
      });
    },
  });
}
