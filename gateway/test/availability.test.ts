import { eventually } from '../../test/support/fixtures';
import { freePort } from '../../test/support/system';
import { expectRateLimitHeaders, type Harness, startHarness } from './support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

test('/livez and /readyz answer without auth; readyz checks Redis and both backends', async () => {
  expect((await h.request('GET', '/livez')).status).toBe(200);
  const ready = await h.request('GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body).toEqual({
    status: 'ok',
    checks: { redis: 'ok', recipientService: 'ok', campaignService: 'ok', nats: 'ok' },
  });
});

test('a backend down is 503 unavailable (retryable); the gateway stays ready and says which', async () => {
  const g = await startHarness({}, { METRICS_PORT: String(await freePort()) });
  try {
    const key = g.backends.data.addKey('prj_a', ['recipients:read']).key;
    g.backends.data.addCampaign('prj_a');
    expect((await g.request('GET', '/api/v1/projects/prj_a/campaigns', { key })).status).toBe(200);
    await g.backends.stopRecipients();
    const r = await g.request('GET', '/api/v1/projects/prj_a/campaigns', { key });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ code: 'unavailable', retryable: true });
    expect(r.text).not.toMatch(/ECONNREFUSED|No connection|grpc/i);
    expectRateLimitHeaders(r);
    // Every replica shares the backend: unready, they would leave the Ingress to answer for them.
    // Checks run at most once a second (monitorDependencies): the state shows within one.
    await eventually(async () => {
      const ready = await g.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({
        status: 'degraded',
        checks: { redis: 'ok', recipientService: 'down', campaignService: 'ok', nats: 'ok' },
      });
      return true;
    });
    const text = await (await fetch(`http://127.0.0.1:${g.gateway.ports.metrics}/metrics`)).text();
    expect(text).toMatch(/dependency_up\{dependency="recipientService"[^}]*\} 0/);
    expect(text).toMatch(/dependency_up\{dependency="campaignService"[^}]*\} 1/);
  } finally {
    await g.stop();
  }
});

test('a backend past the deadline is 503', async () => {
  const slow = await startHarness({}, { GRPC_DEADLINE_MS: '100' });
  try {
    const key = slow.backends.data.addKey('prj_a', ['recipients:read']).key;
    const c = slow.backends.data.addCampaign('prj_a');
    slow.backends.data.recipientDelayMs = 500;
    const r = await slow.request('GET', `/api/v1/projects/prj_a/recipients?campaignId=${c.id}`, { key });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('unavailable');
  } finally {
    await slow.stop();
  }
});

test('paths outside /api are 404 without authentication', async () => {
  const r = await h.request('GET', '/favicon.ico');
  expect(r.status).toBe(404);
  expect(r.body.code).toBe('not_found');
});

test('metrics count requests by route template and rate-limit refusals', async () => {
  // METRICS_PORT 0 means off, so pick a free port first.
  const port = await freePort();
  const g = await startHarness({}, { METRICS_PORT: String(port) });
  try {
    const { key } = g.backends.data.addKey('prj_a', ['recipients:read'], { rateLimitPerMinute: 1 });
    await g.request('GET', '/api/v1/projects/prj_a/campaigns', { key });
    await g.request('GET', '/api/v1/projects/prj_a/campaigns', { key });
    const text = await (await fetch(`http://127.0.0.1:${g.gateway.ports.metrics}/metrics`)).text();
    expect(text).toMatch(
      /http_requests_total\{[^}]*method="GET",route="\/api\/v1\/projects\/:projectId\/campaigns",status="200"[^}]*\} 1/,
    );
    expect(text).toMatch(/status="429"/);
    expect(text).toMatch(/gateway_rate_limited_total\{[^}]*reason="key"[^}]*\} 1/);
  } finally {
    await g.stop();
  }
});
