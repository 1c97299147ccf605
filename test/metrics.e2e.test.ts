/**
 * What every service exports on /metrics, scraped from the real services after known
 * traffic: request series by method, route template and status; refusals; admissions; gRPC
 * calls; PostgreSQL pool gauges; NATS consumer backlog and campaign budgets; and that
 * docs/operations.md's metrics table names exactly what the services export.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { streamNames } from '@outreach/platform';
import { admin, createCampaign, createProject, eventually, type ProjectFixture } from './support/fixtures';
import { type Sample, scrape, select, sum } from './support/prometheus';
import { http, startSystem, type TestSystem } from './support/system';

const CAMPAIGNS = '/api/v1/projects/:projectId/campaigns';
const RECIPIENTS = '/api/v1/projects/:projectId/recipients';
const RECIPIENT = '/api/v1/projects/:projectId/recipients/:recipientId';
const PAGE = '/i/:token';
const START = '/i/:token/conversations';
const SERVICES = ['gateway', 'link-runtime', 'campaign-service', 'recipient-service'];

let sys: TestSystem;
let fx: ProjectFixture;
let limitedKey: string;
let capped: string;
let links: { a: string; b: string };
let before: Record<string, Sample[]>;
let after: Record<string, Sample[]>;

const scrapeAll = async () =>
  Object.fromEntries(
    await Promise.all(SERVICES.map(async (s) => [s, await scrape(sys.metricsUrls[s])] as const)),
  );
/** How much a counter of `service` grew during the traffic. */
const delta = (service: string, name: string, labels: Record<string, string> = {}) =>
  sum(after[service], name, labels) - sum(before[service], name, labels);
const api = (path: string) => `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}${path}`;
const campaignPath = (id: string) => `/projects/${fx.projectId}/campaigns/${id}`;

beforeAll(async () => {
  sys = await startSystem({}, { metrics: true });
  fx = await createProject(sys);
  limitedKey = (
    await admin(sys, 'POST', `/projects/${fx.projectId}/api-keys`, {
      name: 'limited',
      scopes: ['recipients:read'],
      rateLimitPerMinute: 2,
    })
  ).key;

  // A metered campaign with a budget of 3, running from in a moment.
  capped = (await createCampaign(sys, fx.projectId, fx.deviceId, { startDate: new Date(Date.now() + 1500) }))
    .id;
  await admin(sys, 'POST', `${campaignPath(capped)}/top-offs`, { conversations: 3 });
  const created = await http('POST', api('/recipients'), {
    token: fx.keys.rw,
    body: {
      campaignId: capped,
      items: [{ label: 'a', maxInteractionsPerWindow: 1, windowSeconds: 3600 }, { label: 'b' }],
    },
  });
  expect(created.status).toBe(201);
  links = { a: created.body.results[0].link, b: created.body.results[1].link };
  await admin(sys, 'POST', `${campaignPath(capped)}/launch`);

  // Campaigns that must not report a budget: uncapped, a topped-off draft, a halted one.
  const uncapped = (await createCampaign(sys, fx.projectId, fx.deviceId)).id;
  await admin(sys, 'POST', `${campaignPath(uncapped)}/launch`);
  const draft = (await createCampaign(sys, fx.projectId, fx.deviceId)).id;
  await admin(sys, 'POST', `${campaignPath(draft)}/top-offs`, { conversations: 5 });
  const halted = (await createCampaign(sys, fx.projectId, fx.deviceId)).id;
  await admin(sys, 'POST', `${campaignPath(halted)}/top-offs`, { conversations: 5 });
  await admin(sys, 'POST', `${campaignPath(halted)}/launch`);
  await admin(sys, 'POST', `${campaignPath(halted)}/halt`);

  // Wait until the link runtime sees the campaign running (b's page opens), then measure.
  await eventually(async () => (await http('GET', links.b)).status === 200, 10_000);
  before = await scrapeAll();

  // The traffic whose counts are asserted below.
  const statuses: number[] = [];
  const call = async (method: string, url: string, options: Parameters<typeof http>[2] = {}) =>
    statuses.push((await http(method, url, options)).status);
  await call('GET', api('/campaigns'), { token: fx.keys.read });
  await call('GET', api('/campaigns'), { token: fx.keys.read });
  await call('POST', api('/recipients'), { token: fx.keys.read, body: { campaignId: capped, items: [{}] } });
  await call('GET', api('/recipients/rcp_missing'), { token: fx.keys.read });
  for (let i = 0; i < 3; i++) await call('GET', api('/campaigns'), { token: limitedKey });
  await call('GET', links.a);
  await call('POST', `${links.a}/conversations`);
  await call('POST', `${links.a}/conversations`);
  await call('GET', links.a);
  await call('POST', `${links.b}/conversations`);
  await call('GET', `${sys.linkUrl}/i/nope`);
  expect(statuses).toEqual([200, 200, 403, 404, 200, 200, 429, 200, 201, 429, 429, 201, 404]);

  // Usage reaches campaign-service over NATS; wait for it before the final scrape.
  await eventually(async () => {
    const samples = await scrape(sys.metricsUrls['campaign-service']);
    return sum(samples, 'campaign_budget_remaining', { campaign_id: capped }) === 1;
  }, 5000);
  after = await scrapeAll();
}, 60_000);
afterAll(() => sys?.stop());

describe('request series', () => {
  it('counts gateway requests by method, route template and status', () => {
    const m = 'http_requests_total';
    expect(delta('gateway', m, { method: 'GET', route: CAMPAIGNS, status: '200' })).toBe(4);
    expect(delta('gateway', m, { method: 'POST', route: RECIPIENTS, status: '403' })).toBe(1);
    expect(delta('gateway', m, { method: 'GET', route: RECIPIENT, status: '404' })).toBe(1);
    expect(delta('gateway', m, { method: 'GET', route: CAMPAIGNS, status: '429' })).toBe(1);
    expect(delta('gateway', m)).toBe(7);
    for (const s of select(after.gateway, m)) expect(s.labels.service).toBe('gateway');
  });

  it('counts link requests by route template, never by token', () => {
    const m = 'http_requests_total';
    expect(delta('link-runtime', m, { method: 'GET', route: PAGE, status: '200' })).toBe(1);
    expect(delta('link-runtime', m, { method: 'GET', route: PAGE, status: '429' })).toBe(1);
    expect(delta('link-runtime', m, { method: 'GET', route: PAGE, status: '404' })).toBe(1);
    expect(delta('link-runtime', m, { method: 'POST', route: START, status: '201' })).toBe(2);
    expect(delta('link-runtime', m, { method: 'POST', route: START, status: '429' })).toBe(1);
    expect(delta('link-runtime', m)).toBe(6);
    const token = links.a.split('/').pop() as string;
    expect(after['link-runtime'].some((s) => Object.values(s.labels).some((v) => v.includes(token)))).toBe(
      false,
    );
  });

  it('labels the probes by their path on every HTTP service, so that the HTTP alerts can leave them out', async () => {
    const bases: Record<string, string> = {
      gateway: sys.gatewayUrl,
      'link-runtime': sys.linkUrl,
      'campaign-service': sys.adminUrl,
    };
    for (const [service, base] of Object.entries(bases)) {
      const was = await scrape(sys.metricsUrls[service]);
      for (const probe of ['/livez', '/readyz'])
        expect((await http('GET', `${base}${probe}`)).status).toBe(200);
      const now = await scrape(sys.metricsUrls[service]);
      const grew = (name: string, route: string) => sum(now, name, { route }) - sum(was, name, { route });
      for (const route of ['/livez', '/readyz']) {
        expect([service, route, grew('http_requests_total', route)]).toEqual([service, route, 1]);
        expect([service, route, grew('http_request_duration_seconds_count', route)]).toEqual([
          service,
          route,
          1,
        ]);
      }
      expect([service, grew('http_requests_total', 'unmatched')]).toEqual([service, 0]);
    }
  });

  it('counts the admin API by route template on campaign-service', () => {
    const route = '/admin/v1/projects/:p/campaigns/:id/top-offs';
    expect(
      sum(after['campaign-service'], 'http_requests_total', { method: 'POST', route, status: '201' }),
    ).toBe(3);
  });
});

describe('refusals and admissions', () => {
  it('counts the gateway rate-limit refusal by reason', () => {
    expect(delta('gateway', 'gateway_rate_limited_total', { reason: 'key' })).toBe(1);
    expect(delta('gateway', 'gateway_rate_limited_total')).toBe(1);
  });

  it('counts link refusals by code and admitted conversations', () => {
    expect(delta('link-runtime', 'link_refusals_total', { code: 'cooldown', kind: 'rule' })).toBe(2);
    expect(delta('link-runtime', 'link_refusals_total', { code: 'not_found' })).toBe(1);
    expect(delta('link-runtime', 'link_refusals_total')).toBe(3);
    expect(delta('link-runtime', 'link_conversations_admitted_total')).toBe(2);
  });
});

describe('gRPC series', () => {
  it('counts the calls the gateway made, by method and code', () => {
    const m = 'grpc_server_handled_total';
    expect(delta('campaign-service', m, { method: 'ListCampaigns', code: 'OK' })).toBe(4);
    expect(delta('recipient-service', m, { method: 'CountRecipients', code: 'OK' })).toBe(4);
    expect(delta('recipient-service', m, { method: 'GetRecipient', code: 'NOT_FOUND' })).toBe(1);
    expect(delta('recipient-service', m, { method: 'CreateRecipients' })).toBe(0);
  });
});

describe('stores and messaging gauges', () => {
  it("exports the link runtime's usage outbox, drained once JetStream confirmed the starts' events", async () => {
    await eventually(async () => {
      const now = await scrape(sys.metricsUrls['link-runtime']);
      return (
        sum(now, 'link_usage_unconfirmed_batches') === 0 &&
        select(now, 'link_usage_unconfirmed_oldest_seconds').length === 1 &&
        sum(now, 'link_usage_unconfirmed_oldest_seconds') === 0
      );
    }, 5000);
  });

  it('exports the PostgreSQL pool gauges of every service with a pool', () => {
    for (const service of ['link-runtime', 'campaign-service', 'recipient-service']) {
      const total = sum(after[service], 'db_pool_total');
      expect([service, select(after[service], 'db_pool_total')]).toEqual([service, [expect.anything()]]);
      expect(total).toBeGreaterThanOrEqual(1);
      expect(total).toBeLessThanOrEqual(Number(sys.ns.env.DATABASE_POOL_SIZE ?? 10));
      expect(sum(after[service], 'db_pool_idle')).toBeLessThanOrEqual(total);
      expect(select(after[service], 'db_pool_waiting')).toEqual([
        { name: 'db_pool_waiting', labels: { service }, value: 0 },
      ]);
    }
    expect(select(after.gateway, 'db_pool_total')).toEqual([]);
  });

  it('reports every dependency of every service up, the campaign service of the recipient service included', () => {
    const up = (service: string) =>
      Object.fromEntries(select(after[service], 'dependency_up').map((x) => [x.labels.dependency, x.value]));
    expect(up('recipient-service')).toEqual({ postgres: 1, nats: 1, campaignService: 1 });
    expect(up('gateway')).toEqual({ redis: 1, recipientService: 1, campaignService: 1, nats: 1 });
    expect(up('link-runtime')).toEqual({ postgres: 1, redis: 1, nats: 1 });
  });

  it('exports the backlog of each durable consumer, drained to zero once events are handled', async () => {
    const prefix = sys.ns.natsPrefix;
    const streams = streamNames(prefix);
    const pending = async (service: string) =>
      select(await scrape(sys.metricsUrls[service]), 'nats_consumer_pending')
        .map((s) => s.labels)
        .sort((x, y) => x.consumer.localeCompare(y.consumer));
    expect(await pending('recipient-service')).toEqual([
      { service: 'recipient-service', stream: streams.state, consumer: `${prefix}-recipients-campaigns` },
      { service: 'recipient-service', stream: streams.events, consumer: `${prefix}-recipients-usage` },
      {
        service: 'recipient-service',
        stream: streams.events,
        consumer: `${prefix}-recipients-usage-batches`,
      },
      { service: 'recipient-service', stream: streams.events, consumer: `${prefix}-recipients-usage-starts` },
    ]);
    expect(await pending('campaign-service')).toEqual([
      { service: 'campaign-service', stream: streams.events, consumer: `${prefix}_campaign_usage` },
      { service: 'campaign-service', stream: streams.events, consumer: `${prefix}_campaign_usage-batches` },
      { service: 'campaign-service', stream: streams.events, consumer: `${prefix}_campaign_usage-starts` },
    ]);
    await eventually(async () => {
      const values = await Promise.all(
        ['recipient-service', 'campaign-service'].map(async (s) =>
          select(await scrape(sys.metricsUrls[s]), 'nats_consumer_pending').map((x) => x.value),
        ),
      );
      return values.flat().length === 7 && values.flat().every((v) => v === 0);
    }, 5000);
    expect(select(after.gateway, 'nats_consumer_pending')).toEqual([]);
  });

  it('exports the remaining budget of launched, running, capped campaigns only', () => {
    expect(select(after['campaign-service'], 'campaign_budget_remaining')).toEqual([
      {
        name: 'campaign_budget_remaining',
        labels: { service: 'campaign-service', campaign_id: capped },
        value: 1,
      },
    ]);
    expect(sum(before['campaign-service'], 'campaign_budget_remaining', { campaign_id: capped })).toBe(3);
  });

  it('exports only metrics docs/operations.md documents, and every metric it documents', async () => {
    const docs = readFileSync(path.join(__dirname, '..', 'docs', 'operations.md'), 'utf8');
    // The metrics table: each row's first cell names one metric or several.
    const table = docs.slice(docs.indexOf('| metric | labels | meaning |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const documented = new Set(
      rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([a-z0-9_*]+)`/g)].map((m) => m[1])),
    );
    // Every metric family a service declares, incremented yet or not (its `# TYPE` line).
    const exported = new Set<string>();
    for (const service of SERVICES) {
      const text = await (await fetch(sys.metricsUrls[service])).text();
      for (const m of text.matchAll(/^# TYPE (\S+) /gm)) exported.add(m[1]);
    }
    const runtime = (name: string) => name.startsWith('nodejs_') || name.startsWith('process_');
    expect([...exported].filter((name) => !runtime(name) && !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !name.endsWith('*') && !exported.has(name))).toEqual([]);
  });
});
