/**
 * The whole system while Redis or NATS is down (or Redis hangs) and after it comes back, each on a
 * server of the test's own, and while PostgreSQL is cut off behind a proxy: refusals are prompt and retryable, replicas stay ready and say which store is missing, nothing
 * admitted is lost or counted twice, and the system recovers without a restart of its own.
 */

import { type FaultProxy, startFaultProxy } from './support/fault-proxy';
import { admin, createCampaign, createProject, eventually, type ProjectFixture } from './support/fixtures';
import { TEST_SERVERS } from './support/isolation';
import { type PrivateStore, startPrivateStore } from './support/private-store';
import { http, startSystem, type TestSystem } from './support/system';

const api = (fx: ProjectFixture, path: string) => `/api/v1/projects/${fx.projectId}${path}`;

/** A launched campaign, running from in a moment, with one recipient limited to `maxTotal`; its link. */
async function runningRecipient(sys: TestSystem, fx: ProjectFixture, maxTotal: number) {
  const c = await createCampaign(sys, fx.projectId, fx.deviceId, {
    startDate: new Date(Date.now() + 1200).toISOString(),
  });
  await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${c.id}/top-offs`, { conversations: 10 });
  const created = await http('POST', `${sys.gatewayUrl}${api(fx, '/recipients')}`, {
    token: fx.keys.rw,
    body: { campaignId: c.id, items: [{ label: 'outage', maxTotalInteractions: maxTotal }] },
  });
  expect(created.status).toBe(201);
  await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${c.id}/launch`);
  return { campaignId: c.id as string, link: created.body.results[0].link as string };
}

/** The API's view of a campaign's usage: allowance.used and its one recipient's interactionCount. */
async function usage(sys: TestSystem, fx: ProjectFixture, campaignId: string) {
  const { status, body } = await http(
    'GET',
    `${sys.gatewayUrl}${api(fx, `/recipients?campaignId=${campaignId}`)}`,
    {
      token: fx.keys.read,
    },
  );
  expect(status).toBe(200);
  return { used: body.allowance.used, interactionCount: body.recipients[0].interactionCount };
}

/** Calls and returns the status, the error code and how long the answer took. */
async function timed(method: string, url: string, token?: string) {
  const at = Date.now();
  const res = await http(method, url, { token });
  return { status: res.status, code: res.body?.code, retryable: res.body?.retryable, ms: Date.now() - at };
}

/** Waits until each `/readyz` answers 200 `degraded` with `checks` (checks run at most once a second). */
async function expectDegraded(urls: string[], checks: Record<string, string>): Promise<void> {
  for (const url of urls) {
    await eventually(async () => {
      const ready = await http('GET', url);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'degraded', checks });
      return true;
    }, 5000);
  }
}

describe('Redis down, then back empty', () => {
  let redis: PrivateStore;
  let sys: TestSystem;
  let fx: ProjectFixture;
  beforeAll(async () => {
    redis = await startPrivateStore('redis');
    sys = await startSystem({ REDIS_URL: redis.url });
    fx = await createProject(sys);
  });
  afterAll(async () => {
    // After a failure mid-outage too: a service stops cleanly only with its stores there.
    await redis?.up();
    await sys?.stop();
    await redis?.remove();
  });

  it('refuses promptly as retryable, reports redis down while staying ready, then recovers with no cap refunded', async () => {
    const { link } = await runningRecipient(sys, fx, 2);
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 5000);

    await redis.kill();
    const list = await timed('GET', `${sys.gatewayUrl}${api(fx, '/campaigns')}`, fx.keys.read);
    expect(list).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
    const start = await timed('POST', `${link}/conversations`);
    expect(start).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
    // Refused, not held: a client's retry policy, not a hanging socket, decides what comes next.
    expect(Math.max(list.ms, start.ms)).toBeLessThan(3000);
    // A capped link's page asks the counters too: the customer gets the unavailable page.
    const page = await http('GET', link);
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toContain('text/html');
    // Still ready, so that each replica keeps answering for itself, and saying which store is down.
    await expectDegraded([`${sys.gatewayUrl}/readyz`, `${sys.linkUrl}/readyz`], { redis: 'down' });

    await redis.restart();
    for (const url of [`${sys.gatewayUrl}/readyz`, `${sys.linkUrl}/readyz`])
      await eventually(async () => (await http('GET', url)).body?.status === 'ok', 10_000);
    // The restarted Redis is empty: the counters come back from PostgreSQL, so the one start
    // before the outage still counts and the lifetime cap of 2 admits exactly one more.
    const after = [];
    for (let i = 0; i < 3; i++) {
      const res = await http('POST', `${link}/conversations`);
      after.push(`${res.status} ${res.body.code ?? ''}`.trim());
    }
    expect(after).toEqual(['201', '403 link_disabled', '403 link_disabled']);
    expect((await timed('GET', `${sys.gatewayUrl}${api(fx, '/campaigns')}`, fx.keys.read)).status).toBe(200);
  });

  it('refuses promptly while Redis hangs with its connections open, and goes on once it answers again', async () => {
    const { link } = await runningRecipient(sys, fx, 5);
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 5000);

    await redis.pause();
    try {
      const list = await timed('GET', `${sys.gatewayUrl}${api(fx, '/campaigns')}`, fx.keys.read);
      const start = await timed('POST', `${link}/conversations`);
      expect(list).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
      expect(start).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
      // REDIS_COMMAND_TIMEOUT_MS (1 s by default) and a margin for a loaded machine, not a hang.
      expect(Math.max(list.ms, start.ms)).toBeLessThan(3000);
    } finally {
      await redis.resume();
    }
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 5000);
    expect((await timed('GET', `${sys.gatewayUrl}${api(fx, '/campaigns')}`, fx.keys.read)).status).toBe(200);
  });
});

describe('NATS down, then back', () => {
  let nats: PrivateStore;
  let sys: TestSystem;
  let fx: ProjectFixture;
  beforeAll(async () => {
    nats = await startPrivateStore('nats');
    sys = await startSystem({ NATS_URL: nats.url });
    fx = await createProject(sys);
  });
  afterAll(async () => {
    await nats?.up();
    await sys?.stop();
    await nats?.remove();
  });

  it('admits starts meanwhile and counts each once after, and campaign changes reach the links again', async () => {
    const { campaignId, link } = await runningRecipient(sys, fx, 100);
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 5000);
    await eventually(async () => (await usage(sys, fx, campaignId)).used === 1, 3000);

    await nats.kill();
    // Admission needs Redis and PostgreSQL only; the usage events wait for NATS in the record.
    for (let i = 0; i < 2; i++) expect((await http('POST', `${link}/conversations`)).status).toBe(201);
    expect(await usage(sys, fx, campaignId)).toEqual({ used: 1, interactionCount: 1 });
    // Every service that talks to NATS says so, and stays ready.
    await expectDegraded([`${sys.gatewayUrl}/readyz`, `${sys.linkUrl}/readyz`, `${sys.adminUrl}/readyz`], {
      nats: 'down',
    });

    await nats.restart();
    await eventually(async () => {
      const now = await usage(sys, fx, campaignId);
      return now.used === 3 && now.interactionCount === 3;
    }, 30_000);
    // Nothing arrives late to count twice.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await usage(sys, fx, campaignId)).toEqual({ used: 3, interactionCount: 3 });

    // The campaign's changes flow again: a halt stops the link's starts.
    await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${campaignId}/halt`);
    await eventually(async () => (await http('POST', `${link}/conversations`)).status !== 201, 5000);
  });

  it("saves a recipient's change at once while NATS is down, and the links learn of it once it is back", async () => {
    const c = await createCampaign(sys, fx.projectId, fx.deviceId);
    const created = await http('POST', `${sys.gatewayUrl}${api(fx, '/recipients')}`, {
      token: fx.keys.rw,
      body: { campaignId: c.id, items: [{ label: 'changes' }] },
    });
    expect(created.status).toBe(201);
    const { id, link } = created.body.results[0];
    // The link runtime holds the link (its campaign not started yet), for minutes unless told.
    expect((await http('GET', link)).status).toBe(503);

    await nats.kill();
    const deleted = await timed('DELETE', `${sys.gatewayUrl}${api(fx, `/recipients/${id}`)}`, fx.keys.rw);
    // Saved and answered as saved, not held waiting for NATS until the gateway's deadline.
    expect(deleted).toMatchObject({ status: 200 });
    expect(deleted.ms).toBeLessThan(3000);
    expect((await http('GET', link)).status).toBe(503);

    await nats.restart();
    await eventually(async () => (await http('GET', link)).status === 404, 10_000);
  });
});

describe('PostgreSQL cut off, then back', () => {
  let proxy: FaultProxy;
  let sys: TestSystem;
  let fx: ProjectFixture;
  beforeAll(async () => {
    const { hostname, port } = new URL(TEST_SERVERS.postgresAdmin);
    proxy = await startFaultProxy({ host: hostname, port: Number(port || 5432) });
    const viaProxy = (databaseUrl: string) => {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      return url.toString();
    };
    sys = await startSystem(
      {},
      { metrics: true, envFor: (ns) => ({ DATABASE_URL: viaProxy(ns.env.DATABASE_URL) }) },
    );
    fx = await createProject(sys);
  });
  afterAll(async () => {
    await proxy?.restore();
    await sys?.stop();
    await proxy?.close();
  });

  it('refuses reads and starts as retryable, consumes nothing, reports postgres down while staying ready, then recovers', async () => {
    const { campaignId, link } = await runningRecipient(sys, fx, 100);
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 5000);
    await eventually(async () => (await usage(sys, fx, campaignId)).used === 1, 3000);

    await proxy.cut();
    const read = await timed(
      'GET',
      `${sys.gatewayUrl}${api(fx, `/recipients?campaignId=${campaignId}`)}`,
      fx.keys.read,
    );
    expect(read).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
    const start = await timed('POST', `${link}/conversations`);
    expect(start).toMatchObject({ status: 503, code: 'unavailable', retryable: true });
    const dashboard = await http('GET', `${sys.adminUrl}/admin/v1/projects/${fx.projectId}/campaigns`, {
      token: sys.adminToken,
    });
    expect(dashboard.status).toBe(503);
    expect(Math.max(read.ms, start.ms)).toBeLessThan(10_000);
    await expectDegraded([`${sys.linkUrl}/readyz`, `${sys.adminUrl}/readyz`], { postgres: 'down' });
    // A scrape reads the budgets from PostgreSQL: it leaves them out and reports the rest.
    const scrape = await http('GET', sys.metricsUrls['campaign-service']);
    expect(scrape.status).toBe(200);
    expect(scrape.text).toContain('http_requests_total');
    expect(scrape.text).not.toMatch(/^campaign_budget_remaining\{/m);

    await proxy.restore();
    await eventually(async () => (await http('POST', `${link}/conversations`)).status === 201, 15_000);
    // The refused start consumed nothing: two conversations, not three.
    await eventually(async () => {
      const now = await usage(sys, fx, campaignId);
      return now.used === 2 && now.interactionCount === 2;
    }, 5000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await usage(sys, fx, campaignId)).toEqual({ used: 2, interactionCount: 2 });
    expect((await http('GET', sys.metricsUrls['campaign-service'])).text).toMatch(
      new RegExp(`^campaign_budget_remaining\\{campaign_id="${campaignId}"[^}]*\\} 8$`, 'm'),
    );
  });
});
