import type { RunningService } from '@outreach/platform';
import { createTestNamespace, type TestNamespace } from './isolation';

// scripts/ is plain JavaScript, run by node directly; the bench picks its ports the same way.
const ports = require('../../scripts/lib/wait') as { freePort: () => Promise<number> };

/** A free TCP port on loopback that no outgoing connection can take before it is bound. */
export const freePort = ports.freePort;

/** The whole system running in this process, on its own namespace of the real stores. */
export interface TestSystem {
  ns: TestNamespace;
  gatewayUrl: string;
  linkUrl: string;
  adminUrl: string;
  adminToken: string;
  /** INTERNAL_TOKEN: every gRPC call between the services carries it, and the servers require it. */
  internalToken: string;
  services: RunningService[];
  /** The environment every service was started with (before its own METRICS_PORT). */
  env: Record<string, string>;
  /** `http://127.0.0.1:<port>/metrics` by service name, when started with `{ metrics: true }`. */
  metricsUrls: Record<string, string>;
  stop(): Promise<void>;
}

/** Options of `startSystem`. */
export interface SystemOptions {
  /** Give each service a free METRICS_PORT of its own and report the URLs in `metricsUrls`. */
  metrics?: boolean;
  /** Variables derived from the namespace (its database URL through a proxy, say); they win over the rest. */
  envFor?: (ns: TestNamespace) => Record<string, string>;
  /** Variables of one service only, by its name; they win over all the others. */
  serviceEnv?: Record<string, Record<string, string>>;
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
  const internalToken = 'test-internal-token-0123456789abcdef';
  const linkUrl = `http://127.0.0.1:${link}`;
  const env: Record<string, string> = {
    ...ns.env,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    INTERNAL_TOKEN: internalToken,
    PUBLIC_BASE_URL: linkUrl,
    CAMPAIGN_GRPC_PORT: String(campaignGrpc),
    RECIPIENT_GRPC_PORT: String(recipientGrpc),
    DASHBOARD_PORT: String(dashboard),
    LINK_PORT: String(link),
    GATEWAY_PORT: String(gateway),
    CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignGrpc}`,
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientGrpc}`,
    ...extraEnv,
    ...options.envFor?.(ns),
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
      Object.assign(serviceEnv, options.serviceEnv?.[name]);
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
    internalToken,
    services,
    env,
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
