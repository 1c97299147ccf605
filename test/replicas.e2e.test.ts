/**
 * Two instances of every stateless service on the same stores, as a scaled deployment runs
 * them: limits, admissions, scheduled lifecycle events and revocations stay exact across
 * replicas because their state lives in Redis, PostgreSQL and NATS, never in a process.
 */
import { type CampaignLifecycleEvent, subjects } from '@outreach/contracts';
import { type RunningService, streamNames } from '@outreach/platform';
import { AckPolicy, connect, DeliverPolicy, type NatsConnection, type Subscription } from 'nats';
import { admin, createCampaign, createProject, eventually, type ProjectFixture } from './support/fixtures';
import { createTestNamespace, TEST_SERVERS, type TestNamespace } from './support/isolation';
import { untilRefused } from './support/revocation';
import { freePort, http, type TestSystem } from './support/system';

const ADMIN_TOKEN = 'test-admin-token';

/** Two of each service; gateways and link runtimes each use one backend replica. */
interface Replicas {
  ns: TestNamespace;
  gateways: string[];
  links: string[];
  admins: string[];
  services: RunningService[];
}

async function startReplicas(): Promise<Replicas> {
  const ns = await createTestNamespace();
  const port = async () => String(await freePort());
  const base = { ...ns.env, HOST: '127.0.0.1', ADMIN_TOKEN, SCHEDULER_INTERVAL_MS: '100' };
  const services: RunningService[] = [];
  const start = async (name: string, env: Record<string, string>, options = {}) =>
    services.push(await require(`@outreach/${name}`).start({ ...base, ...env }, options));
  const campaignGrpc = [await port(), await port()];
  const recipientGrpc = [await port(), await port()];
  const dashboard = [await port(), await port()];
  const linkPorts = [await port(), await port()];
  const gatewayPorts = [await port(), await port()];
  const links = linkPorts.map((p) => `http://127.0.0.1:${p}`);
  try {
    for (const i of [0, 1])
      await start('campaign-service', {
        CAMPAIGN_GRPC_PORT: campaignGrpc[i],
        DASHBOARD_PORT: dashboard[i],
        RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientGrpc[i]}`,
        PUBLIC_BASE_URL: links[0],
      });
    for (const i of [0, 1])
      await start('recipient-service', {
        RECIPIENT_GRPC_PORT: recipientGrpc[i],
        CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignGrpc[i]}`,
        PUBLIC_BASE_URL: links[0],
      });
    // Crosswise: link runtime and gateway i use the backends of replica 1 - i.
    for (const i of [0, 1])
      await start('link-runtime', {
        LINK_PORT: linkPorts[i],
        RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientGrpc[1 - i]}`,
      });
    // Grants are cached for a minute, so only the revocation stream can make a revoked key fail fast.
    for (const i of [0, 1])
      await start(
        'gateway',
        {
          GATEWAY_PORT: gatewayPorts[i],
          CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignGrpc[1 - i]}`,
          RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientGrpc[1 - i]}`,
        },
        { grantTtlMs: 60_000 },
      );
  } catch (err) {
    for (const s of services.reverse()) await s.stop().catch(() => undefined);
    await ns.cleanup();
    throw err;
  }
  return {
    ns,
    gateways: gatewayPorts.map((p) => `http://127.0.0.1:${p}`),
    links,
    admins: dashboard.map((p) => `http://127.0.0.1:${p}`),
    services,
  };
}

let r: Replicas;
let fx: ProjectFixture;
/** The fixtures helpers only need the admin URL and token; replica 0 serves them. */
const sysOf = (i = 0) => ({ adminUrl: r.admins[i], adminToken: ADMIN_TOKEN }) as TestSystem;
const api = (gateway: string, path: string) => `${gateway}/api/v1/projects/${fx.projectId}${path}`;
/** The same link on link runtime `i`. */
const onLink = (link: string, i: number) => link.replace(r.links[0], r.links[i]);
const count = (xs: number[], x: number) => xs.filter((v) => v === x).length;

beforeAll(async () => {
  r = await startReplicas();
  fx = await createProject(sysOf());
}, 60_000);
afterAll(async () => {
  if (!r) return;
  for (const s of [...r.services].reverse()) await s.stop().catch(() => undefined);
  await r.ns.cleanup();
});

/** Creates recipients through gateway 0 in a draft campaign; returns their links. */
async function recipients(campaignId: string, items: unknown[]): Promise<string[]> {
  const res = await http('POST', api(r.gateways[0], '/recipients'), {
    token: fx.keys.rw,
    body: { campaignId, items },
  });
  expect(res.status).toBe(201);
  return res.body.results.map((x: { link: string }) => x.link);
}

/** Launches a campaign starting shortly and waits until both link runtimes open its link. */
async function launchAndWait(campaignId: string, link: string): Promise<void> {
  await admin(sysOf(1), 'POST', `/projects/${fx.projectId}/campaigns/${campaignId}/launch`);
  for (const i of [0, 1])
    await eventually(async () => (await http('GET', onLink(link, i))).status === 200, 10_000);
}

it('rate limits a key exactly across both gateways', async () => {
  const limit = 7;
  const key = (
    await admin(sysOf(), 'POST', `/projects/${fx.projectId}/api-keys`, {
      name: 'shared-limit',
      scopes: ['recipients:read'],
      rateLimitPerMinute: limit,
    })
  ).key;
  const statuses = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      http('GET', api(r.gateways[i % 2], '/campaigns'), { token: key }).then((res) => res.status),
    ),
  );
  expect(count(statuses, 200)).toBe(limit);
  expect(count(statuses, 429)).toBe(40 - limit);
});

it('admits exactly a recipient lifetime cap and a campaign budget under parallel starts on both link runtimes', async () => {
  const startDate = new Date(Date.now() + 2000).toISOString();
  const lifetime = (await createCampaign(sysOf(), fx.projectId, fx.deviceId, { startDate })).id;
  const [capped] = await recipients(lifetime, [{ label: 'capped', maxTotalInteractions: 9 }]);
  const budgeted = (await createCampaign(sysOf(), fx.projectId, fx.deviceId, { startDate })).id;
  await admin(sysOf(), 'POST', `/projects/${fx.projectId}/campaigns/${budgeted}/top-offs`, {
    conversations: 6,
  });
  await admin(sysOf(1), 'POST', `/projects/${fx.projectId}/campaigns/${budgeted}/top-offs`, {
    conversations: 5,
  });
  const many = await recipients(
    budgeted,
    Array.from({ length: 20 }, (_, i) => ({ label: `r${i}` })),
  );
  await launchAndWait(lifetime, capped);
  await launchAndWait(budgeted, many[0]);

  const starts = (urls: string[]) =>
    Promise.all(
      urls.map((u, i) =>
        http('POST', `${onLink(u, i % 2)}/conversations`).then((res) => ({
          status: res.status,
          code: res.body?.code,
        })),
      ),
    );
  const [onCapped, onBudget] = await Promise.all([
    starts(Array.from({ length: 220 }, () => capped)),
    starts(Array.from({ length: 220 }, (_, i) => many[i % many.length])),
  ]);
  expect(onCapped.filter((x) => x.status === 201)).toHaveLength(9);
  expect(onCapped.filter((x) => x.status !== 201).every((x) => x.code === 'link_disabled')).toBe(true);
  expect(onBudget.filter((x) => x.status === 201)).toHaveLength(11);
  expect(onBudget.filter((x) => x.status !== 201).every((x) => x.code === 'budget_exhausted')).toBe(true);

  // The durable record agrees on both campaign-service replicas once usage is consumed.
  for (const i of [0, 1])
    await eventually(async () => {
      const c = await admin(sysOf(i), 'GET', `/projects/${fx.projectId}/campaigns/${budgeted}`);
      return c.allowance.used === 11 && c.allowance.remaining === 0;
    }, 5000);
}, 60_000);

describe('scheduled lifecycle events with two schedulers', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: TEST_SERVERS.nats });
  });
  afterAll(() => nc?.close());

  it('publishes exactly one started and one ended event for a campaign that starts and ends within seconds', async () => {
    const subject = subjects(r.ns.natsPrefix).campaignLifecycle;
    // A plain subscription sees every publish, duplicates the stream would drop included.
    const seen: CampaignLifecycleEvent[] = [];
    const sub: Subscription = nc.subscribe(subject);
    (async () => {
      for await (const m of sub) seen.push(m.json<CampaignLifecycleEvent>());
    })();
    const start = Date.now() + 1500;
    const end = start + 1500;
    const c = (
      await createCampaign(sysOf(), fx.projectId, fx.deviceId, {
        startDate: new Date(start).toISOString(),
        endDate: new Date(end).toISOString(),
      })
    ).id;
    await admin(sysOf(), 'POST', `/projects/${fx.projectId}/campaigns/${c}/launch`);
    const mine = () => seen.filter((e) => e.campaignId === c);
    await eventually(async () => mine().some((e) => e.transition === 'ended'), end - Date.now() + 5000);
    // Give a second publisher every chance to show up: many scheduler passes.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    sub.unsubscribe();
    expect(mine().map((e) => e.transition)).toEqual(['started', 'ended']);
    expect(mine()[0]).toEqual({
      campaignId: c,
      projectId: fx.projectId,
      transition: 'started',
      at: new Date(start).toISOString(),
    });
    expect(mine()[1].at).toBe(new Date(end).toISOString());

    // The stream holds the same two, read with a JetStream consumer.
    const stream = streamNames(r.ns.natsPrefix).events;
    const name = `${r.ns.natsPrefix}-test-lifecycle`;
    await (await nc.jetstreamManager()).consumers.add(stream, {
      durable_name: name,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
    });
    const consumer = await nc.jetstream().consumers.get(stream, name);
    const stored: CampaignLifecycleEvent[] = [];
    const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
    for await (const m of batch) stored.push(m.json<CampaignLifecycleEvent>());
    expect(stored.filter((e) => e.campaignId === c).map((e) => e.transition)).toEqual(['started', 'ended']);
  }, 30_000);
});

it('refuses a key revoked on one campaign-service replica on both gateways within a second', async () => {
  const made = await admin(sysOf(), 'POST', `/projects/${fx.projectId}/api-keys`, {
    name: 'revoke-me',
    scopes: ['recipients:read'],
  });
  // Both gateways have the grant cached before the revocation.
  for (const g of r.gateways)
    expect((await http('GET', api(g, '/campaigns'), { token: made.key })).status).toBe(200);
  await admin(sysOf(1), 'DELETE', `/projects/${fx.projectId}/api-keys/${made.id}`, undefined, [200, 204]);
  const revokedAt = Date.now();
  // Judged by when requests were sent (a refusal sent in time once arrived at 1,069 ms).
  const refused = await Promise.all(
    r.gateways.map((g) =>
      untilRefused(
        async () => (await http('GET', api(g, '/campaigns'), { token: made.key })).status,
        revokedAt,
      ),
    ),
  );
  for (const each of refused) {
    expect(each.status).toBe(401);
    expect(each.lastAdmittedMs).toBeLessThan(1000);
  }
});
