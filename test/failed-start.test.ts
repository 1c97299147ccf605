import { createServer, type Server } from 'node:net';
import type { RunningService } from '@outreach/platform';
import { createTestNamespace, type TestNamespace } from './support/isolation';
import { freePort } from './support/system';

type Start = (env: NodeJS.ProcessEnv) => Promise<RunningService>;

// Each service and the port variables it listens on; a start whose listen fails must reject
// and close what it had opened (Kubernetes restarts the pod; tests and `npm start` go on).
const LISTENERS: Array<[string, string[]]> = [
  ['gateway', ['GATEWAY_PORT', 'METRICS_PORT']],
  ['link-runtime', ['LINK_PORT', 'METRICS_PORT']],
  ['campaign-service', ['DASHBOARD_PORT', 'CAMPAIGN_GRPC_PORT', 'METRICS_PORT']],
  ['recipient-service', ['RECIPIENT_GRPC_PORT', 'METRICS_PORT']],
];

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace();
});
afterAll(() => ns?.cleanup());

const hold = (port: number) =>
  new Promise<Server>((resolve) => {
    const server = createServer().listen(port, '127.0.0.1', () => resolve(server));
  });

/** What keeps this process alive (sockets, servers, timers), counted by kind. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** The kinds of which more are open now than in `before`, with their counts now. */
const added = (before: Record<string, number>, now: Record<string, number>) =>
  Object.fromEntries(Object.entries(now).filter(([kind, n]) => n > (before[kind] ?? 0)));

/** Polls until nothing is open beyond `before`, or `ms` pass; returns what still is. */
async function settleTo(before: Record<string, number>, ms: number): Promise<Record<string, number>> {
  const until = Date.now() + ms;
  let extra = added(before, resources());
  while (Date.now() < until && Object.keys(extra).length > 0) {
    await new Promise((r) => setTimeout(r, 100));
    extra = added(before, resources());
  }
  return extra;
}

describe.each(LISTENERS)('%s', (name, variables) => {
  it.each(variables)('rejects when %s is taken and leaves nothing open', async (variable) => {
    const env: Record<string, string> = { ...ns.env, HOST: '127.0.0.1', LOG_LEVEL: 'silent' };
    for (const v of LISTENERS.flatMap(([, vs]) => vs)) env[v] = '0';
    // The gRPC clients connect lazily: nothing needs to answer at these addresses.
    env.CAMPAIGN_SERVICE_ADDR = `127.0.0.1:${await freePort()}`;
    env.RECIPIENT_SERVICE_ADDR = `127.0.0.1:${await freePort()}`;
    const port = await freePort();
    env[variable] = String(port);
    const holder = await hold(port);
    const { start } = require(`@outreach/${name}`) as { start: Start };
    try {
      const before = resources();
      let running: RunningService | undefined;
      const outcome = await start(env).then(
        (s) => {
          running = s;
          return 'started';
        },
        // gRPC reports the bind failure in its message: "… errors: [listen EADDRINUSE: …]".
        (err: NodeJS.ErrnoException) => `${err.code} ${err.message}`,
      );
      await running?.stop();
      expect(outcome).toContain('EADDRINUSE');
      expect(await settleTo(before, 10_000)).toEqual({});
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });
});
