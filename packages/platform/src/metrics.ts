import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Lifecycle, Opened } from './lifecycle';
import { closeServer, listen } from './listen';
import { RequestMetrics } from './request-metrics';
import { TIMED_OUT, within } from './within';

/** The metrics every service records; services add their own on `registry`. */
export interface ServiceMetrics {
  registry: Registry;
  /**
   * `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route}`:
   * `http.record([method, route], status, seconds)`.
   */
  http: RequestMetrics;
  /** `grpc_server_handled_total{method,code}` and `grpc_server_handling_seconds{method}`. */
  grpc: RequestMetrics;
}

/** A registry per service instance (never the global one), so tests can build several apps. */
export function createMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
  return {
    registry,
    http: new RequestMetrics(registry, {
      counter: { name: 'http_requests_total', help: 'HTTP requests by method, route template and status' },
      histogram: {
        name: 'http_request_duration_seconds',
        help: 'HTTP request latency by method and route template',
      },
      labelNames: ['method', 'route'],
      outcomeLabel: 'status',
      buckets,
    }),
    grpc: new RequestMetrics(registry, {
      counter: { name: 'grpc_server_handled_total', help: 'gRPC calls handled by method and status code' },
      histogram: { name: 'grpc_server_handling_seconds', help: 'gRPC handling latency by method' },
      labelNames: ['method'],
      outcomeLabel: 'code',
      buckets,
    }),
  };
}

/** What a metrics port's probes answer by (see openMetrics). */
export interface MetricsProbes {
  lifecycle: Pick<Lifecycle, 'isDraining'>;
  /** False until the service serves what it is probed for. */
  started: () => boolean;
}

/** `/readyz` as `healthRoutes` answers it, without dependency checks: starting, draining or ok. */
function readiness(probes: MetricsProbes): { status: 'starting' | 'draining' | 'ok'; code: number } {
  if (!probes.started()) return { status: 'starting', code: 503 };
  if (probes.lifecycle.isDraining) return { status: 'draining', code: 503 };
  return { status: 'ok', code: 200 };
}

/** Serves `GET /metrics` on its own port (0 picks a free one), and the probes with `probes` (see openMetrics). */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
  probes?: MetricsProbes,
): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (probes && (req.url === '/livez' || req.url === '/readyz')) {
      const { status, code } = req.url === '/livez' ? { status: 'ok', code: 200 } : readiness(probes);
      res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status }));
      return;
    }
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    try {
      const text = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
    } catch {
      // A collector that failed must cost one scrape, not the process (an async handler's
      // rejection would be unhandled); the scraper records the target as down.
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n');
    }
  });
  await listen(server, port, host);
  return server;
}

/**
 * Serves `registry` on `port` at `host` as a service's start does, recorded in `opened` so that
 * it closes with the rest; returns its port, or undefined when `port` is 0 (metrics off). With
 * `probes`, it also answers `/livez` (200 while the process answers at all) and `/readyz` (503
 * `starting` until `started()`, 503 `draining` once shutdown began, else 200), as `healthRoutes`
 * does: the probes of a gRPC-only service whose port speaks TLS, which the kubelet's gRPC probe
 * does not.
 */
export async function openMetrics(
  opened: Opened,
  registry: Registry,
  port: number,
  host: string,
  probes?: MetricsProbes,
): Promise<number | undefined> {
  if (port <= 0) return undefined;
  const server = opened.add('metrics', await serveMetrics(registry, port, host, probes), closeServer);
  return (server.address() as AddressInfo).port;
}

/** The counters of a pg Pool that `registerPoolMetrics` reads. */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * Registers `db_pool_total`, `db_pool_idle` and `db_pool_waiting`, read from the pool when
 * scraped, so the values are current and nothing polls between scrapes.
 */
export function registerPoolMetrics(registry: Registry, pool: PoolCounts): void {
  const gauges: Array<[string, string, keyof PoolCounts]> = [
    ['db_pool_total', 'PostgreSQL connections open in the pool', 'totalCount'],
    ['db_pool_idle', 'PostgreSQL connections open and idle in the pool', 'idleCount'],
    ['db_pool_waiting', 'Queries waiting for a PostgreSQL connection', 'waitingCount'],
  ];
  for (const [name, help, field] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(pool[field]);
      },
    });
  }
}

/** A durable JetStream consumer whose backlog is exported. */
export interface ConsumerRef {
  stream: string;
  consumer: string;
}

/** What `registerConsumerLag` needs of a JetStreamManager. */
export interface ConsumerInfoSource {
  consumers: {
    info(stream: string, consumer: string): Promise<{ num_pending: number; num_ack_pending: number }>;
  };
}

/**
 * Registers `nats_consumer_pending{stream,consumer}`: messages not yet delivered plus those
 * delivered but not acknowledged, asked of the server when scraped. A consumer that does not
 * answer within `timeoutMs` is left out of that scrape rather than holding it up.
 */
export function registerConsumerLag(
  registry: Registry,
  jsm: ConsumerInfoSource,
  consumers: ConsumerRef[],
  timeoutMs = 1000,
): void {
  new Gauge({
    name: 'nats_consumer_pending',
    help: 'Messages of a durable JetStream consumer not yet delivered or not yet acknowledged',
    labelNames: ['stream', 'consumer'],
    registers: [registry],
    async collect() {
      const infos = await Promise.all(
        consumers.map(({ stream, consumer }) => withTimeout(jsm.consumers.info(stream, consumer), timeoutMs)),
      );
      this.reset();
      consumers.forEach(({ stream, consumer }, i) => {
        const info = infos[i];
        if (info) this.set({ stream, consumer }, info.num_pending + info.num_ack_pending);
      });
    },
  });
}

/** The promise's value, or undefined when it fails or takes longer than `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  const value = await within(
    promise.catch(() => undefined),
    ms,
  );
  return value === TIMED_OUT ? undefined : value;
}
