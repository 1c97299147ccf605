import { credentials } from '@grpc/grpc-js';
import { loadCampaignsProto } from '@outreach/contracts';
import { callUnary, type RunningService } from '@outreach/platform';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { start } from '../src/server';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A clock tests move by hand. */
export function manualClock(startAt: string) {
  let t = Date.parse(startAt);
  return {
    now: () => new Date(t),
    set: (iso: string) => {
      t = Date.parse(iso);
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** The env a test instance starts with: the namespace plus free ports and a fast sweep. */
export function serviceEnv(ns: TestNamespace, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...ns.env,
    ADMIN_TOKEN,
    DASHBOARD_PORT: '0',
    CAMPAIGN_GRPC_PORT: '0',
    HOST: '127.0.0.1',
    SCHEDULER_INTERVAL_MS: '100',
    RECIPIENT_SERVICE_ADDR: '127.0.0.1:1',
    ...extra,
  };
}

/** A small JSON client of the admin API. */
export function adminClient(service: RunningService, token = ADMIN_TOKEN) {
  const base = `http://127.0.0.1:${service.ports.http}`;
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: test responses are inspected field by field
    const json: any = text ? JSON.parse(text) : undefined;
    return { status: res.status, body: json, headers: res.headers };
  };
}

/** A CampaignService client on the instance's gRPC port. */
export function grpcClient(service: RunningService) {
  const proto = loadCampaignsProto();
  const client = new proto.outreach.v1.CampaignService(
    `127.0.0.1:${service.ports.grpc}`,
    credentials.createInsecure(),
  );
  return {
    client,
    // biome-ignore lint/suspicious/noExplicitAny: replies are checked field by field
    call: async <T = any>(method: string, req: unknown): Promise<T> =>
      strip(await callUnary<unknown, T>(client, method, req)),
  };
}

export { createTestNamespace, start };

/** Polls until `fn` returns a truthy value or the timeout passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Drops proto-loader's `_field` oneof markers so replies compare like the API's objects. */
function strip<T>(value: T): T {
  if (Array.isArray(value)) return value.map(strip) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !k.startsWith('_'))
      .map(([k, v]) => [k, strip(v)]),
  ) as T;
}
