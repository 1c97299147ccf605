import type { CampaignSnapshot, DeviceSnapshot, RecipientMessage } from '@outreach/contracts';
import type { RunningService } from '@outreach/platform';
import pino from 'pino';
import { createTestNamespace, type TestNamespace } from '../../../test/support/isolation';
import { start } from '../../src/server';
import { activeCampaign, device, recipient, StatePublisher } from './fixtures';
import { TestResolveLinkServer } from './resolve-link-server';

/** A running link runtime in its own namespace, with a test ResolveLink server and a publisher. */
export interface Harness {
  ns: TestNamespace;
  service: RunningService;
  base: string;
  recipients: TestResolveLinkServer;
  publisher: StatePublisher;
  /** The service's clock: frozen at `fixed` when set, else real time. */
  clock: { fixed: number | null };
  /** What the service logged at the harness's level (warn unless asked) and above, as parsed JSON lines. */
  logs: Record<string, unknown>[];
  /** Publishes a device and a campaign and registers one recipient; waits until the link is live. */
  link(options?: {
    campaign?: Partial<CampaignSnapshot>;
    device?: Partial<DeviceSnapshot>;
    recipient?: Partial<RecipientMessage>;
    waitLive?: boolean;
  }): Promise<{
    token: string;
    recipient: RecipientMessage;
    campaign: CampaignSnapshot;
    device: DeviceSnapshot;
  }>;
  close(): Promise<void>;
}

/**
 * Starts a link runtime exactly as main does, with the namespace env plus `env`; `logs` keeps
 * what it logs at `logLevel` (default warn) and above.
 */
export async function startHarness(
  env: Record<string, string> = {},
  options: { logLevel?: string } = {},
): Promise<Harness> {
  const ns = await createTestNamespace();
  const recipients = new TestResolveLinkServer();
  const addr = await recipients.start();
  const publisher = await StatePublisher.connect(ns.env.NATS_URL, ns.natsPrefix);
  const clock: { fixed: number | null } = { fixed: null };
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: options.logLevel ?? 'warn' },
    { write: (line: string) => logs.push(JSON.parse(line)) },
  );
  const service = await start(
    { ...ns.env, LINK_PORT: '0', HOST: '127.0.0.1', RECIPIENT_SERVICE_ADDR: addr, ...env },
    { clock: () => new Date(clock.fixed ?? Date.now()), logger },
  );
  const base = `http://127.0.0.1:${service.ports.http}`;
  return {
    ns,
    service,
    base,
    recipients,
    publisher,
    clock,
    logs,
    async link(options = {}) {
      const d = await publisher.device(device(options.device));
      const c = await publisher.campaign(activeCampaign({ deviceId: d.id, ...options.campaign }));
      const r = recipient(c, options.recipient);
      recipients.recipients.set(r.token, r.recipient);
      if (options.waitLive !== false) {
        // Setting up, not the freshness under test (those tests time their own waits): generous
        // on two loaded cores, and saying what the service warned of if the link never goes live.
        await waitFor(async () => (await fetch(`${base}/i/${r.token}`)).status !== 503, LIVE_WITHIN_MS).catch(
          (err: Error) => {
            const said = logs.slice(-5).map((line) => JSON.stringify(line));
            throw new Error(`${err.message}; the service's last warnings: ${said.join('\n') || 'none'}`);
          },
        );
      }
      return { token: r.token, recipient: r.recipient, campaign: c, device: d };
    },
    async close() {
      await service.stop();
      await publisher.close();
      await recipients.stop();
      await ns.cleanup();
    },
  };
}

// How long a new link may take to go live when set up (see link()).
const LIVE_WITHIN_MS = 10_000;

/** Polls `check` until it is true or `timeoutMs` passes; returns how long it took. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 3000): Promise<number> {
  const started = Date.now();
  for (;;) {
    // Judged by when each check was sent, not answered: a slow answer does not make a change late.
    const sentAfter = Date.now() - started;
    if (sentAfter > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    if (await check()) return sentAfter;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** POST helper returning status, headers and the parsed JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: tests inspect response bodies field by field
type Json = any;

export async function post(
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Streams and pages are returned as text.
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
