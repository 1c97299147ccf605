import type { RunningService } from '@outreach/platform';
import { createTestNamespace, type TestNamespace } from '../../../test/support/isolation';
import { type StartOptions, start } from '../../src/server';
import { startTestBackends, type TestBackends } from './test-backends';

/** One HTTP exchange as a test sees it. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
}

/** Options of one request. */
export interface Send {
  key?: string;
  body?: unknown;
  /** Raw body text (sent as is, with the given content type). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** A gateway started exactly like main does, in its own namespace, against test backends. */
export interface Harness {
  ns: TestNamespace;
  backends: TestBackends;
  gateway: RunningService;
  base: string;
  request: (method: string, path: string, send?: Send) => Promise<Reply>;
  stop: () => Promise<void>;
}

/** Starts namespace, test backends and the gateway; `env` overrides the gateway env. */
export async function startHarness(
  options: StartOptions = {},
  env: Record<string, string> = {},
  backendOptions: Parameters<typeof startTestBackends>[0] = {},
): Promise<Harness> {
  const ns = await createTestNamespace();
  const backends = await startTestBackends(backendOptions);
  const gateway = await start(
    {
      ...ns.env,
      GATEWAY_PORT: '0',
      HOST: '127.0.0.1',
      RECIPIENT_SERVICE_ADDR: backends.recipientAddr,
      CAMPAIGN_SERVICE_ADDR: backends.campaignAddr,
      GRPC_DEADLINE_MS: '2000',
      ...env,
    },
    options,
  );
  const base = `http://127.0.0.1:${gateway.ports.http}`;
  const request = async (method: string, path: string, send: Send = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...send.headers };
    if (send.key !== undefined) headers.authorization = `Bearer ${send.key}`;
    let body: string | Buffer | undefined;
    if (send.raw !== undefined) body = send.raw;
    else if (send.body !== undefined) {
      body = JSON.stringify(send.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${base}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
  return {
    ns,
    backends,
    gateway,
    base,
    request,
    stop: async () => {
      await gateway.stop();
      await backends.stop();
      await ns.cleanup();
    },
  };
}

/** Asserts the rate-limit headers every API response carries. */
export function expectRateLimitHeaders(reply: Reply): void {
  for (const h of [
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'x-ratelimit-used',
    'ratelimit-policy',
    'ratelimit',
  ]) {
    if (!reply.headers.get(h)) throw new Error(`missing ${h} on ${reply.status}: ${reply.text}`);
  }
  const reset = Number(reply.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  if (!Number.isInteger(reset) || reset < now - 1 || reset > now + 61) throw new Error(`bad reset ${reset}`);
}
