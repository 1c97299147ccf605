import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { loadHealthProto } from '@outreach/contracts';
import type { ReadinessCheck } from './http';
import type { Lifecycle } from './lifecycle';

/**
 * Serves grpc.health.v1 on `server`: SERVING only while every readiness check passes and
 * the process is not draining, so Kubernetes' gRPC probes see the truth.
 */
export function addGrpcHealth(
  server: Server,
  lifecycle: Lifecycle,
  checks: Record<string, ReadinessCheck>,
): void {
  const proto = loadHealthProto();
  const status = async (): Promise<'SERVING' | 'NOT_SERVING'> => {
    if (lifecycle.isDraining) return 'NOT_SERVING';
    try {
      const results = await Promise.all(Object.values(checks).map((c) => c()));
      return results.includes(false) ? 'NOT_SERVING' : 'SERVING';
    } catch {
      return 'NOT_SERVING';
    }
  };
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
