import { request as httpRequest } from 'node:http';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { type Harness, type Reply, startHarness } from './support/harness';

let h: Harness;
let key: string;
let campaignId: string;
const base = '/api/v1/projects/prj_a';
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON
let doc: any;
const seen: { method: string; template: string; reply: Reply }[] = [];

async function call(method: string, template: string, path: string, body?: unknown, headers = {}) {
  const reply = await h.request(method, `${base}${path}`, { key, body, headers });
  seen.push({ method, template, reply });
  return reply;
}

beforeAll(async () => {
  h = await startHarness();
  key = h.backends.data.addKey('prj_a', ['recipients:read', 'recipients:write']).key;
  campaignId = h.backends.data.addCampaign('prj_a', 'upcoming').id;
  h.backends.data.addCampaign('prj_a', 'active', 'Live');
  h.backends.data.addCampaign('prj_other');
  const r = await h.request('GET', '/api/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(() => h?.stop());

test('the API document is public and rate limited per address', async () => {
  const r = await h.request('GET', '/api/v1/openapi.json');
  expect(r.headers.get('x-ratelimit-limit')).toBe('600');
  expect(doc.openapi).toBe('3.1.0');
});

test('full recipient lifecycle with the documented shapes', async () => {
  const created = await call('POST', '/recipients', '/recipients', {
    campaignId,
    items: [
      { externalId: 'ada@example.com', label: 'Ada', metadata: { plan: 'pro', seats: 3 } },
      { externalId: 'ada@example.com' },
      { label: 'y'.repeat(500) },
    ],
  });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ created: 1, failed: 2, total: 3 });
  const [ok, dup, bad] = created.body.results;
  expect(ok).toMatchObject({ status: 'created', index: 0, externalId: 'ada@example.com', label: 'Ada' });
  expect(ok.metadata).toEqual({ plan: 'pro', seats: '3' });
  expect(ok.maxTotalInteractions).toBeNull();
  expect(dup).toEqual({ status: 'duplicate', index: 1, externalId: 'ada@example.com', id: ok.id });
  expect(bad).toMatchObject({ status: 'error', index: 2, code: 'invalid_request' });
  expect(bad).not.toHaveProperty('externalId');

  const allFailed = await call('POST', '/recipients', '/recipients', { campaignId, items: [{ zzz: 1 }] });
  expect(allFailed.status).toBe(422);
  expect(allFailed.body).toMatchObject({ created: 0, failed: 1, total: 1 });

  const list = await call('GET', '/recipients', `/recipients?campaignId=${campaignId}`);
  expect(list.status).toBe(200);
  expect(list.body).toMatchObject({ projectId: 'prj_a', campaignId, total: 1, limit: 50, offset: 0 });
  expect(list.body.allowance).toEqual({ used: 3, included: 100, remaining: 97, exhausted: false });
  expect(Object.keys(list.body.recipients[0]).sort()).toEqual(
    [
      'id',
      'campaignId',
      'externalId',
      'label',
      'isActive',
      'link',
      'interactionCount',
      'maxTotalInteractions',
      'maxInteractionsPerWindow',
      'windowSeconds',
      'lastInteractionAt',
      'createdAt',
    ].sort(),
  );
  const paged = await call(
    'GET',
    '/recipients',
    `/recipients?campaignId=${campaignId}&limit=1&offset=1&active=true`,
  );
  expect(paged.body).toMatchObject({ limit: 1, offset: 1, total: 1, recipients: [] });

  const one = await call('GET', '/recipients/{recipientId}', `/recipients/${ok.id}`);
  expect(one.body).toEqual(list.body.recipients[0]);

  const patched = await call('PATCH', '/recipients/{recipientId}', `/recipients/${ok.id}`, {
    label: null,
    isActive: false,
  });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ id: ok.id, label: null, isActive: false });

  const emptyPatch = await call('PATCH', '/recipients/{recipientId}', `/recipients/${ok.id}`, {});
  expect(emptyPatch.status).toBe(400);

  const missing = await call('GET', '/recipients/{recipientId}', '/recipients/rcp_missing');
  expect(missing.status).toBe(404);
  expect(missing.body.code).toBe('not_found');

  const campaigns = await call('GET', '/campaigns', '/campaigns');
  expect(campaigns.body.projectId).toBe('prj_a');
  expect(campaigns.body.campaigns).toHaveLength(2);
  const upcoming = campaigns.body.campaigns.find((c: { id: string }) => c.id === campaignId);
  expect(upcoming).toMatchObject({ recipientCount: 1, state: 'upcoming' });
  expect(upcoming.timing).toMatchObject({
    state: 'upcoming',
    startsInSeconds: 3600,
    runningForSeconds: null,
  });
  const filtered = await call('GET', '/campaigns', '/campaigns?state=active');
  expect(filtered.body.campaigns.map((c: { name: string }) => c.name)).toEqual(['Live']);

  const removed = await call('DELETE', '/recipients/{recipientId}', `/recipients/${ok.id}`);
  expect(removed.body).toEqual({ success: true, id: ok.id });

  await call('POST', '/recipients', '/recipients', {
    campaignId,
    items: [{ externalId: 'b' }, { externalId: 'c' }],
  });
  const bulk = await call('POST', '/recipients/bulk-delete', '/recipients/bulk-delete', { all: true });
  expect(bulk.body).toMatchObject({ success: true, deleted: 2, skippedCampaignIds: [] });
  const bulkIds = await call('POST', '/recipients/bulk-delete', '/recipients/bulk-delete', {
    ids: ['rcp_gone'],
  });
  expect(bulkIds.body).toEqual({ success: true, deleted: 0, ids: [] });
  const bulkBad = await call('POST', '/recipients/bulk-delete', '/recipients/bulk-delete', {
    ids: [],
    all: true,
  });
  expect(bulkBad.status).toBe(400);
  // Both forms at once are named as such, not as an unknown field.
  expect(bulkBad.body.error).toBe('Invalid body: it must have either ids or all, not both.');

  const unknownCampaign = await call('GET', '/recipients', '/recipients?campaignId=cmp_nope');
  expect(unknownCampaign.status).toBe(404);
  const foreign = await call('POST', '/recipients', '/recipients', {
    campaignId: 'cmp_nope',
    items: [{ externalId: 'z' }],
  });
  expect(foreign.status).toBe(404);
});

test('a bulk delete fault names the field of the form its key names, and only its problems', async () => {
  const refusal = async (body: unknown) => {
    const r = await call('POST', '/recipients/bulk-delete', '/recipients/bulk-delete', body);
    expect(r.status).toBe(400);
    return { error: r.body.error, ...r.body.details };
  };
  expect(await refusal({ all: true, x: 1 })).toEqual({
    error: 'Invalid body: /x is not a known field.',
    pointer: '/x',
    rule: 'additionalProperties',
    problems: [{ pointer: '/x', rule: 'additionalProperties', message: 'is not a known field' }],
  });
  expect(await refusal({ all: 'yes' })).toEqual({
    error: 'Invalid body: /all must be true.',
    pointer: '/all',
    rule: 'const',
    problems: [{ pointer: '/all', rule: 'const', message: 'must be true' }],
  });
  expect(await refusal({ ids: [] })).toMatchObject({
    pointer: '/ids',
    rule: 'minItems',
    problems: [{ pointer: '/ids', rule: 'minItems', message: 'must NOT have fewer than 1 items' }],
  });
});

test('refusals carry the error body with every field', async () => {
  const r = await call('GET', '/campaigns', '/campaigns?state=bogus');
  expect(Object.keys(r.body).sort()).toEqual(['code', 'details', 'error', 'hint', 'retryable']);
  // A query parameter where none is taken: documented as 400 there too.
  for (const method of ['GET', 'DELETE'])
    expect((await call(method, '/recipients/{recipientId}', '/recipients/rcp_x?x=1')).status).toBe(400);
  expect(r.headers.get('x-request-id')).toBeTruthy();
  const mine = await h.request('GET', `${base}/campaigns`, {
    key,
    headers: { 'x-request-id': 'req-abc.123' },
  });
  expect(mine.headers.get('x-request-id')).toBe('req-abc.123');
});

test("the API key's check goes to the campaign service with the request's id and trace context", async () => {
  // A key not seen yet, so the gateway must ask the campaign service.
  const fresh = h.backends.data.addKey('prj_a', ['recipients:read']).key;
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const r = await h.request('GET', `${base}/campaigns`, {
    key: fresh,
    headers: { traceparent, tracestate: 'vendor=abc', 'x-request-id': 'req-verify-1' },
  });
  expect(r.status).toBe(200);
  expect(h.backends.data.lastVerifyMetadata).toMatchObject({
    'x-request-id': 'req-verify-1',
    traceparent,
    tracestate: 'vendor=abc',
  });
});

test("the client's trace context goes on to the services behind, when well-formed", async () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  await h.request('GET', `${base}/campaigns`, {
    key,
    headers: { traceparent, tracestate: 'vendor=abc', 'x-request-id': 'req-trace-1' },
  });
  expect(h.backends.data.lastListMetadata).toMatchObject({
    'x-request-id': 'req-trace-1',
    traceparent,
    tracestate: 'vendor=abc',
  });
  // An all-zero trace id is invalid: neither it nor its tracestate is passed on.
  await h.request('GET', `${base}/campaigns`, {
    key,
    headers: { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, tracestate: 'vendor=abc' },
  });
  expect(h.backends.data.lastListMetadata).not.toHaveProperty('traceparent');
  expect(h.backends.data.lastListMetadata).not.toHaveProperty('tracestate');
  // Version 00 takes no more fields; a later version's may hold only visible ASCII, as gRPC
  // metadata does (a byte past it made the call fail as 500): both are ignored, the call made.
  const ids = '4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  for (const malformed of [`00-${ids}-more`, `01-${ids}-\u00e9`]) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${h.base}${base}/campaigns`, {
        headers: { authorization: `Bearer ${key}`, traceparent: malformed, 'x-request-id': 'req-trace-2' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect([malformed, status]).toEqual([malformed, 200]);
    expect(h.backends.data.lastListMetadata).toMatchObject({ 'x-request-id': 'req-trace-2' });
    expect(h.backends.data.lastListMetadata).not.toHaveProperty('traceparent');
  }
  const later = `01-${ids}-more`;
  await h.request('GET', `${base}/campaigns`, { key, headers: { traceparent: later } });
  expect(h.backends.data.lastListMetadata).toMatchObject({ traceparent: later });
});

test('every response seen conforms to the OpenAPI document', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'https://outreach.test/openapi', components: doc.components });
  expect(seen.length).toBeGreaterThan(15);
  for (const { method, template, reply } of seen) {
    const op = doc.paths[`/api/v1/projects/{projectId}${template}`]?.[method.toLowerCase()];
    expect(op).toBeDefined();
    const response = op.responses[String(reply.status)];
    if (!response) throw new Error(`${method} ${template} ${reply.status} is not documented`);
    const schema = response.content['application/json'].schema;
    const validate = ajv.compile({ $ref: `https://outreach.test/openapi${schema.$ref}` });
    // A 422 on create is either the batch body or the idempotency refusal.
    if (
      !validate(reply.body) &&
      !(
        reply.status === 422 &&
        ajv.validate(
          { $ref: 'https://outreach.test/openapi#/components/schemas/create-response' },
          reply.body,
        )
      )
    ) {
      throw new Error(
        `${method} ${template} ${reply.status}: ${ajv.errorsText(validate.errors)}\n${reply.text}`,
      );
    }
    for (const name of Object.keys(response.headers ?? {})) {
      if (['Idempotent-Replayed', 'Retry-After', 'WWW-Authenticate'].includes(name)) continue;
      expect([template, name, reply.headers.get(name) !== null]).toEqual([template, name, true]);
    }
  }
});
