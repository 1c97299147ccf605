import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { RunningService } from '@outreach/platform';
import { createTestNamespace, type TestNamespace } from './isolation';

/** Lowest and highest port Linux hands out to outgoing connections and `listen(0)`. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return [Number(low), Number(high)];
  } catch {
    return [32768, 60999];
  }
}

/** Whether `port` can be listened on at 127.0.0.1 right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port on loopback that is free now and, unlike one from `listen(0)`, stays free until a
 * service binds it: it lies below the kernel's ephemeral range, which outgoing connections and
 * every other `listen(0)` of parallel test workers draw from (a port from that range was once
 * taken between the pick and the bind: EADDRINUSE in a gRPC service's start).
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const first = 10_000;
  if (low - first >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = first + Math.floor(Math.random() * (low - first));
      if (await bindable(port)) return port;
    }
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The whole system running in this process, on its own namespace of the real stores. */
export interface TestSystem {
  ns: TestNamespace;
  gatewayUrl: string;
  linkUrl: string;
  adminUrl: string;
  adminToken: string;
  services: RunningService[];
  /** `http://127.0.0.1:<port>/metrics` by service name, when started with `{ metrics: true }`. */
  metricsUrls: Record<string, string>;
  stop(): Promise<void>;
}

/** Options of `startSystem`. */
export interface SystemOptions {
  /** Give each service a free METRICS_PORT of its own and report the URLs in `metricsUrls`. */
  metrics?: boolean;
}

/**
 * Starts campaign-service, recipient-service, link-runtime and gateway exactly as their
 * main modules do, with free ports and an isolated database, Redis prefix and NATS prefix.
 */
export async function startSystem(
  extraEnv: Record<string, string> = {},
  options: SystemOptions = {},
): Promise<TestSystem> {
  const ns = await createTestNamespace();
  const [campaignGrpc, recipientGrpc, dashboard, link, gateway] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const adminToken = 'test-admin-token';
  const linkUrl = `http://127.0.0.1:${link}`;
  const env: Record<string, string> = {
    ...ns.env,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    PUBLIC_BASE_URL: linkUrl,
    CAMPAIGN_GRPC_PORT: String(campaignGrpc),
    RECIPIENT_GRPC_PORT: String(recipientGrpc),
    DASHBOARD_PORT: String(dashboard),
    LINK_PORT: String(link),
    GATEWAY_PORT: String(gateway),
    CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignGrpc}`,
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientGrpc}`,
    ...extraEnv,
  };
  const services: RunningService[] = [];
  const stop = async () => {
    for (const s of [...services].reverse()) await s.stop().catch(() => undefined);
    await ns.cleanup();
  };
  const metricsUrls: Record<string, string> = {};
  try {
    for (const name of ['campaign-service', 'recipient-service', 'link-runtime', 'gateway']) {
      const serviceEnv = { ...env };
      if (options.metrics) {
        const port = await freePort();
        serviceEnv.METRICS_PORT = String(port);
        metricsUrls[name] = `http://127.0.0.1:${port}/metrics`;
      }
      services.push(await require(`@outreach/${name}`).start(serviceEnv));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ns,
    gatewayUrl: `http://127.0.0.1:${gateway}`,
    linkUrl,
    adminUrl: `http://127.0.0.1:${dashboard}`,
    adminToken,
    services,
    metricsUrls,
    stop,
  };
}

/** A parsed JSON body; tests read arbitrary paths from it and assert on them. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests.
export type Json = any;

/** A small JSON client for tests: returns status, headers and parsed body. */
export async function http(
  method: string,
  url: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Json; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}
