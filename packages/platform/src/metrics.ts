import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** The metrics every service records; services add their own on `registry`. */
export interface ServiceMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  grpcRequests: Counter<'method' | 'code'>;
  grpcDuration: Histogram<'method'>;
}

/** A registry per service instance (never the global one), so tests can build several apps. */
export function createMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method and route template',
      labelNames: ['method', 'route'],
      buckets,
      registers: [registry],
    }),
    grpcRequests: new Counter({
      name: 'grpc_server_handled_total',
      help: 'gRPC calls handled by method and status code',
      labelNames: ['method', 'code'],
      registers: [registry],
    }),
    grpcDuration: new Histogram({
      name: 'grpc_server_handling_seconds',
      help: 'gRPC handling latency by method',
      labelNames: ['method'],
      buckets,
      registers: [registry],
    }),
  };
}

/** Serves `GET /metrics` on its own port (0 picks a free one). */
export async function serveMetrics(registry: Registry, port: number, host = '0.0.0.0'): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': registry.contentType });
    res.end(await registry.metrics());
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return server;
}
