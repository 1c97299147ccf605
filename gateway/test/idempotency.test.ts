import { expectRateLimitHeaders, type Harness, startHarness } from './support/harness';

let h: Harness;
let key: string;
let campaignId: string;
const path = '/api/v1/projects/prj_a/recipients';

beforeAll(async () => {
  h = await startHarness();
  key = h.backends.data.addKey('prj_a', ['recipients:read', 'recipients:write']).key;
  campaignId = h.backends.data.addCampaign('prj_a').id;
});
afterAll(() => h?.stop());
afterEach(() => {
  h.backends.data.recipientDelayMs = 0;
});

const create = (idem: string, body: unknown) =>
  h.request('POST', path, { key, body, headers: { 'idempotency-key': idem } });
const creates = () => h.backends.data.calls.filter((c) => c === 'CreateRecipients').length;

test('the first response is replayed byte for byte and the backend is called once', async () => {
  const body = { campaignId, items: [{ externalId: 'idem-1', label: 'Ada' }] };
  const before = creates();
  const first = await create('k-replay', body);
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  const second = await create('k-replay', body);
  expect(second.status).toBe(201);
  expect(second.text).toBe(first.text);
  expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expectRateLimitHeaders(second);
  expect(creates() - before).toBe(1);
  // The same body with other key order or spacing is the same request.
  const reordered = await h.request('POST', path, {
    key,
    raw: ` {"items":[{"label":"Ada","externalId":"idem-1"}], "campaignId":"${campaignId}"}`,
    headers: { 'idempotency-key': 'k-replay', 'content-type': 'application/json' },
  });
  expect(reordered.text).toBe(first.text);
});

test('refusals below 500 are kept too (a 422 batch replays as 422)', async () => {
  const body = { campaignId, items: [{ nope: true }] };
  const first = await create('k-422', body);
  expect(first.status).toBe(422);
  const again = await create('k-422', body);
  expect(again.status).toBe(422);
  expect(again.text).toBe(first.text);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
});

test('reuse with a different body, path or method is 422 idempotency_key_reused', async () => {
  await create('k-diff', { campaignId, items: [{ externalId: 'idem-2' }] });
  const other = await create('k-diff', { campaignId, items: [{ externalId: 'idem-3' }] });
  expect(other.status).toBe(422);
  expect(other.body).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
  const otherPath = await h.request('PATCH', `${path}/rcp_zzz`, {
    key,
    body: { label: 'x' },
    headers: { 'idempotency-key': 'k-diff' },
  });
  expect(otherPath.body.code).toBe('idempotency_key_reused');
});

test('a concurrent duplicate while the first is in flight is 409 idempotency_in_progress', async () => {
  // Long enough for the duplicate to pass authentication, the rate limit and the key check on a
  // loaded machine while the first is still held.
  h.backends.data.recipientDelayMs = 1500;
  const body = { campaignId, items: [{ externalId: 'idem-4' }] };
  const before = creates();
  const first = create('k-flight', body);
  // In flight once the backend has it (the gateway claims the key first), however long a loaded
  // machine took to get it there: a fixed 100 ms could send the duplicate before the claim.
  for (let i = 0; i < 300 && creates() === before; i++) await new Promise((r) => setTimeout(r, 10));
  const dup = await create('k-flight', body);
  expect(dup.status).toBe(409);
  expect(dup.body).toMatchObject({ code: 'idempotency_in_progress', retryable: true });
  expect((await first).status).toBe(201);
  h.backends.data.recipientDelayMs = 0;
  const after = await create('k-flight', body);
  expect(after.headers.get('idempotent-replayed')).toBe('true');
});

test('keys are scoped per API key', async () => {
  const other = h.backends.data.addKey('prj_a', ['recipients:write']).key;
  const body = { campaignId, items: [{ externalId: 'idem-5' }] };
  await create('k-scope', body);
  const r = await h.request('POST', path, {
    key: other,
    body: { campaignId, items: [{ externalId: 'idem-6' }] },
    headers: { 'idempotency-key': 'k-scope' },
  });
  expect(r.status).toBe(201);
  expect(r.headers.get('idempotent-replayed')).toBeNull();
});

test('5xx responses are not kept: the retry runs again', async () => {
  const lone = await startHarness();
  try {
    const k = lone.backends.data.addKey('prj_a', ['recipients:write']).key;
    const c = lone.backends.data.addCampaign('prj_a').id;
    await lone.backends.stopRecipients();
    const body = { campaignId: c, items: [{ externalId: 'x' }] };
    const send = () => lone.request('POST', path, { key: k, body, headers: { 'idempotency-key': 'k-5xx' } });
    const down = await send();
    expect(down.status).toBe(503);
    const again = await send();
    expect(again.status).toBe(503);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  } finally {
    await lone.stop();
  }
});

test('a malformed Idempotency-Key is 400', async () => {
  const r = await create('x'.repeat(256), { campaignId, items: [{}] });
  expect(r.status).toBe(400);
  expect(r.body.code).toBe('invalid_request');
});
