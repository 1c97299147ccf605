import { gzipSync } from 'node:zlib';
import { GRANT_TTL_MS } from '../src/grant-cache';
import { expectRateLimitHeaders, type Harness, startHarness } from './support/harness';

/** Every endpoint with the scope it needs and a body when it takes one. */
const ENDPOINTS = (campaignId: string) => [
  { method: 'GET', path: 'campaigns', scope: 'recipients:read' },
  { method: 'GET', path: `recipients?campaignId=${campaignId}`, scope: 'recipients:read' },
  { method: 'GET', path: 'recipients/rcp_x', scope: 'recipients:read' },
  {
    method: 'POST',
    path: 'recipients',
    scope: 'recipients:write',
    body: { campaignId, items: [{ externalId: 'x' }] },
  },
  { method: 'PATCH', path: 'recipients/rcp_x', scope: 'recipients:write', body: { label: 'x' } },
  { method: 'DELETE', path: 'recipients/rcp_x', scope: 'recipients:write' },
  { method: 'POST', path: 'recipients/bulk-delete', scope: 'recipients:write', body: { ids: ['rcp_x'] } },
];

let h: Harness;
let campaignId: string;
let full: string;
let readOnly: string;
let writeOnly: string;

beforeAll(async () => {
  h = await startHarness({ failedAuthPerMinute: 1000 });
  campaignId = h.backends.data.addCampaign('prj_a').id;
  full = h.backends.data.addKey('prj_a', ['recipients:read', 'recipients:write']).key;
  readOnly = h.backends.data.addKey('prj_a', ['recipients:read']).key;
  writeOnly = h.backends.data.addKey('prj_a', ['recipients:write']).key;
});
afterAll(() => h?.stop());

describe('401 unauthorized', () => {
  const expired = () =>
    h.backends.data.addKey('prj_a', ['recipients:read'], {
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    }).key;
  const revoked = () => {
    const k = h.backends.data.addKey('prj_a', ['recipients:read']);
    h.backends.data.revoke(k.keyId);
    return k.key;
  };
  const cases: [string, () => Record<string, string>][] = [
    ['missing header', () => ({})],
    ['wrong scheme', () => ({ authorization: `Basic ${full}` })],
    ['bearer without key', () => ({ authorization: 'Bearer ' })],
    ['malformed key', () => ({ authorization: 'Bearer a b c' })],
    ['unknown key', () => ({ authorization: 'Bearer ok_test_00000000000000000000' })],
    ['expired key', () => ({ authorization: `Bearer ${expired()}` })],
    ['revoked key', () => ({ authorization: `Bearer ${revoked()}` })],
  ];
  test.each(cases)('%s', async (_name, headers) => {
    const r = await h.request('GET', '/api/v1/projects/prj_a/campaigns', { headers: headers() });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 'unauthorized', retryable: false });
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expectRateLimitHeaders(r);
  });

  test('a key too short to be one is told what a key looks like, not only the header form', async () => {
    const r = await h.request('GET', '/api/v1/projects/prj_a/campaigns', {
      headers: { authorization: 'Bearer ork_bad' },
    });
    expect(r.body.details.reason).toBe('malformed');
    expect(r.body.error).toContain('the key 8 to 512 letters, digits or ._~+/=-');
  });

  test('on every endpoint', async () => {
    for (const e of ENDPOINTS(campaignId)) {
      const r = await h.request(e.method, `/api/v1/projects/prj_a/${e.path}`, { body: e.body });
      expect([e.path, r.status, r.body.code]).toEqual([e.path, 401, 'unauthorized']);
    }
  });
});

describe('403', () => {
  test('project mismatch on every endpoint, whether or not the project exists', async () => {
    h.backends.data.addCampaign('prj_b');
    for (const project of ['prj_b', 'prj_nonexistent']) {
      for (const e of ENDPOINTS(campaignId)) {
        const r = await h.request(e.method, `/api/v1/projects/${project}/${e.path}`, {
          key: full,
          body: e.body,
        });
        expect([e.method, e.path, r.status]).toEqual([e.method, e.path, 403]);
        expect(r.body).toMatchObject({ code: 'forbidden', details: { reason: 'project_mismatch' } });
        expectRateLimitHeaders(r);
      }
    }
  });

  test('missing scope on every endpoint names the scope', async () => {
    for (const e of ENDPOINTS(campaignId)) {
      const key = e.scope === 'recipients:read' ? writeOnly : readOnly;
      const r = await h.request(e.method, `/api/v1/projects/prj_a/${e.path}`, { key, body: e.body });
      expect([e.method, e.path, r.status]).toEqual([e.method, e.path, 403]);
      expect(r.body).toMatchObject({ code: 'forbidden', details: { requiredScope: e.scope } });
      expectRateLimitHeaders(r);
    }
  });
});

describe('routing and bodies', () => {
  test('unknown route under /api is 404 not_found', async () => {
    const r = await h.request('GET', '/api/v1/projects/prj_a/nothing-here', { key: full });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    expectRateLimitHeaders(r);
    // Paths are matched as written: another case is another, unknown, path.
    for (const path of ['/api/v1/projects/prj_a/Recipients', '/api/v1/Projects/prj_a/campaigns']) {
      const other = await h.request('GET', path, { key: full });
      expect([other.status, other.body.code]).toEqual([404, 'not_found']);
    }
  });

  test('a trailing slash is another, unknown, path: 404 after authentication, never the route', async () => {
    const a = '/api/v1/projects/prj_a';
    for (const [method, path, body] of [
      ['GET', `${a}/campaigns/`],
      ['GET', `${a}/recipients/rcp_x/`],
      ['PATCH', `${a}/recipients/rcp_x/`, { label: 'x' }],
      ['POST', `${a}/recipients/`, { campaignId, items: [{ label: 'slash' }] }],
      ['POST', `${a}/recipients/bulk-delete/`, { ids: ['rcp_x'] }],
      // A method no route has is not 405 either: the path itself does not exist.
      ['PUT', `${a}/recipients/`],
      ['GET', '/api/v1/openapi.json/'],
    ] as const) {
      const r = await h.request(method, path, { key: full, body });
      expect([method, path, r.status, r.body.code, r.body.details]).toEqual([
        method,
        path,
        404,
        'not_found',
        { reason: 'unknown_route' },
      ]);
      expect(r.headers.get('allow')).toBeNull();
    }
    // Authentication still comes first.
    expect((await h.request('GET', `${a}/campaigns/`)).status).toBe(401);

    // A create sent with the slash runs nothing and keeps nothing under its key, so the retry
    // without it is made once and then replayed, never refused as another request.
    const headers = { 'idempotency-key': 'slash-retry-1' };
    const body = { campaignId, items: [{ label: 'slash' }] };
    const slashed = await h.request('POST', `${a}/recipients/`, { key: full, body, headers });
    expect(slashed.status).toBe(404);
    const first = await h.request('POST', `${a}/recipients`, { key: full, body, headers });
    expect(first.status).toBe(201);
    const again = await h.request('POST', `${a}/recipients`, { key: full, body, headers });
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(again.text).toBe(first.text);
  });

  test('wrong method is 405 with Allow', async () => {
    const r = await h.request('PUT', '/api/v1/projects/prj_a/recipients', { key: full });
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
    const allow = (r.headers.get('allow') ?? '').split(', ');
    expect(allow).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(allow).not.toContain('PUT');
    expectRateLimitHeaders(r);
  });

  test('body over 1 MiB is 413', async () => {
    const big = JSON.stringify({ campaignId, items: [{ label: 'x'.repeat(1024 * 1024) }] });
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
      key: full,
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
    expectRateLimitHeaders(r);
  });

  test('non-JSON body is 415', async () => {
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
      key: full,
      raw: 'campaignId=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(415);
    expect(r.body.code).toBe('unsupported_media_type');
    expectRateLimitHeaders(r);
  });

  test.each([
    'application/merge-patch+json',
    'application/vnd.api+json',
    'application/json; charset=latin1',
    'application/json; charset=ISO-8859-1',
    'application/json; charset=utf-16',
  ])('a body declared %s is 415: only application/json in UTF-8 is read', async (contentType) => {
    const r = await h.request('PATCH', '/api/v1/projects/prj_a/recipients/rcp_x', {
      key: full,
      raw: '{"label":"x"}',
      headers: { 'content-type': contentType },
    });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ code: 'unsupported_media_type', details: { contentType } });
    expectRateLimitHeaders(r);
  });

  test.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; charset=utf8',
    'Application/JSON; Charset="utf-8"',
  ])('a body declared %s is read', async (contentType) => {
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
      key: full,
      raw: '{"campaignId":"cmp_x","items":[]}',
      headers: { 'content-type': contentType },
    });
    expect(r.status).toBe(400);
    expect(r.body.details).toMatchObject({ pointer: '/items', rule: 'minItems' });
  });

  test.each([
    ['stray bytes', [0xff, 0xfe]],
    ['a surrogate in UTF-8 form (CESU-8)', [0xed, 0xa0, 0x80]],
    ['an overlong form', [0xc1, 0xbf]],
    ['an emoji cut short', [0xf0, 0x9f, 0x98]],
  ])(
    'a body that is not UTF-8 is 400 malformed_json naming the byte, never stored as U+FFFD: %s',
    async (_, bad) => {
      const head = Buffer.from(`{"campaignId":"${campaignId}","items":[{"label":"ab`);
      const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
        key: full,
        raw: Buffer.concat([head, Buffer.from(bad), Buffer.from('cd"}]}')]),
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        code: 'invalid_request',
        details: { reason: 'malformed_json', message: `Invalid UTF-8 at byte ${head.length}` },
      });
      expectRateLimitHeaders(r);
    },
  );

  test('a compressed body is 415, not misread as malformed JSON', async () => {
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
      key: full,
      raw: gzipSync('{"campaignId":"cmp_x","items":[{}]}'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ code: 'unsupported_media_type', details: { contentEncoding: 'gzip' } });
  });

  test('malformed JSON is 400 without parser internals leaking beyond the message', async () => {
    const r = await h.request('PATCH', '/api/v1/projects/prj_a/recipients/rcp_x', {
      key: full,
      raw: '{"label":',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_request', details: { reason: 'malformed_json' } });
    expect(r.text).not.toMatch(/at .*\.js:\d+/);
    expectRateLimitHeaders(r);
  });

  test.each([
    [
      'a limit read as Infinity',
      'POST',
      '/api/v1/projects/prj_a/recipients',
      '{"campaignId":"cmp_x","items":[{"maxTotalInteractions":1e999}]}',
      '/items/0/maxTotalInteractions',
    ],
    [
      'a limit read as -Infinity',
      'PATCH',
      '/api/v1/projects/prj_a/recipients/rcp_x',
      '{"maxTotalInteractions":-1e999}',
      '/maxTotalInteractions',
    ],
    [
      'an integer past 2^53',
      'POST',
      '/api/v1/projects/prj_a/recipients',
      '{"campaignId":"cmp_x","items":[{"metadata":{"crm/id":12345678901234567891}}]}',
      '/items/0/metadata/crm~1id',
    ],
  ])(
    'a number JSON cannot keep exactly is 400, never stored changed: %s',
    async (_name, method, path, raw, pointer) => {
      const r = await h.request(method, path, {
        key: full,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        code: 'invalid_request',
        details: { reason: 'number_out_of_range', pointer, rule: 'exactNumber' },
      });
    },
  );

  test("malformed JSON's refusal names the token, not the body around it", async () => {
    const r = await h.request('PATCH', '/api/v1/projects/prj_a/recipients/rcp_x', {
      key: full,
      raw: '{"label": x4111111111111111}',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.text).not.toContain('411111111');
    expect(r.body.details.message).toBe("Unexpected token 'x' in JSON");
  });

  test('request-level create faults are 400 naming the field', async () => {
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', {
      key: full,
      body: { campaignId, items: [], extra: 1 },
    });
    expect(r.status).toBe(400);
    const pointers = r.body.details.problems.map((p: { pointer: string }) => p.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/items', '/extra']));
  });

  test('a body that is not an object is 400 saying so, not naming an empty field', async () => {
    const r = await h.request('POST', '/api/v1/projects/prj_a/recipients', { key: full, body: [] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      error: 'Invalid body: it must be object.',
      details: { pointer: '', rule: 'type' },
    });
  });

  test('list query outside the rules is 400, never clamped', async () => {
    for (const q of ['limit=0', 'limit=201', 'offset=-1', 'limit=2.5', 'active=yes', '']) {
      const r = await h.request('GET', `/api/v1/projects/prj_a/recipients?campaignId=${campaignId}&${q}`, {
        key: full,
      });
      if (q === '') expect(r.status).toBe(200);
      else expect([q, r.status, r.body.code]).toEqual([q, 400, 'invalid_request']);
    }
    const missing = await h.request('GET', '/api/v1/projects/prj_a/recipients', { key: full });
    expect(missing.status).toBe(400);
  });

  test('an unknown query parameter is 400 on every endpoint, never ignored', async () => {
    for (const e of ENDPOINTS(campaignId)) {
      const path = `/api/v1/projects/prj_a/${e.path}${e.path.includes('?') ? '&' : '?'}dryRun=true`;
      const r = await h.request(e.method, path, { key: full, body: e.body });
      expect([e.method, e.path, r.status, r.body.code, r.body.details?.pointer]).toEqual([
        e.method,
        e.path,
        400,
        'invalid_request',
        '/dryRun',
      ]);
    }
  });

  test('campaign state filter outside the four states is 400', async () => {
    const r = await h.request('GET', '/api/v1/projects/prj_a/campaigns?state=running', { key: full });
    expect(r.status).toBe(400);
  });
});

describe('rate limits', () => {
  test('per key: 429 rate_limited with Retry-After and headers; other keys unaffected', async () => {
    const { key } = h.backends.data.addKey('prj_a', ['recipients:read'], { rateLimitPerMinute: 3 });
    const seen = [];
    for (let i = 0; i < 4; i++)
      seen.push(await h.request('GET', '/api/v1/projects/prj_a/campaigns', { key }));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(seen.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    expect(seen.map((r) => r.headers.get('x-ratelimit-used'))).toEqual(['1', '2', '3', '3']);
    const refused = seen[3];
    expect(refused.body).toMatchObject({ code: 'rate_limited', retryable: true });
    const retryAfter = refused.headers.get('retry-after') ?? '';
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
    expect(refused.headers.get('ratelimit')).toMatch(/^"per-key";r=0;t=\d+$/);
    const other = await h.request('GET', '/api/v1/projects/prj_a/campaigns', { key: full });
    expect(other.status).toBe(200);
  });

  test('default limit is 600 a minute', async () => {
    const { key } = h.backends.data.addKey('prj_a', ['recipients:read'], { rateLimitPerMinute: 0 });
    const r = await h.request('GET', '/api/v1/projects/prj_a/campaigns', { key });
    expect(r.headers.get('x-ratelimit-limit')).toBe('600');
  });
});

test('failed authentications are limited per client address', async () => {
  const g = await startHarness({ failedAuthPerMinute: 3 });
  try {
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const r = await g.request('GET', '/api/v1/projects/prj_a/campaigns', {
        key: 'ok_test_wrong_wrong_wrong',
      });
      statuses.push(r.status);
      expectRateLimitHeaders(r);
      if (r.status === 429) {
        expect(r.body.code).toBe('rate_limited');
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      }
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  } finally {
    await g.stop();
  }
});

test("a client's bad keys do not shut out another's good key at the same address", async () => {
  const g = await startHarness({ failedAuthPerMinute: 3 });
  try {
    const { key } = g.backends.data.addKey('prj_a', ['recipients:read']);
    const list = (k: string) => g.request('GET', '/api/v1/projects/prj_a/campaigns', { key: k });
    expect((await list(key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await list(`ok_test_wrong_${i}_wrong_wrong`)).status).toBe(401);
    expect((await list('ok_test_another_wrong_guess')).status).toBe(429);
    // Cached, and once its cached grant is stale (looked up again), the good key goes on.
    expect((await list(key)).status).toBe(200);
    await new Promise((r) => setTimeout(r, GRANT_TTL_MS + 100));
    expect((await list(key)).status).toBe(200);
    // A key never seen valid is still refused before any look-up.
    const { key: fresh } = g.backends.data.addKey('prj_a', ['recipients:read']);
    expect((await list(fresh)).status).toBe(429);
  } finally {
    await g.stop();
  }
});

test('TRUST_PROXY takes the client address from X-Forwarded-For', async () => {
  const g = await startHarness({ failedAuthPerMinute: 1 }, { TRUST_PROXY: 'true' });
  try {
    const bad = (ip: string) =>
      g.request('GET', '/api/v1/projects/prj_a/campaigns', { headers: { 'x-forwarded-for': ip } });
    expect((await bad('203.0.113.1')).status).toBe(401);
    expect((await bad('203.0.113.1')).status).toBe(429);
    expect((await bad('203.0.113.2')).status).toBe(401);
    // A first entry the client wrote itself does not make it someone else: the proxy's entry counts.
    expect((await bad('198.51.100.7, 203.0.113.2')).status).toBe(429);
  } finally {
    await g.stop();
  }
});
