/**
 * Property: malformed bodies, query strings and headers thrown at every endpoint never yield
 * a 5xx, always yield the error body, and leave the stores unchanged.
 */
import fc from 'fast-check';
import { Client } from 'pg';
import { createProject, type ProjectFixture } from './support/fixtures';
import { http, startSystem, type TestSystem } from './support/system';

let sys: TestSystem;
let fx: ProjectFixture;
let recipientId: string;

beforeAll(async () => {
  sys = await startSystem();
  fx = await createProject(sys);
  const res = await http('POST', `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
    token: fx.keys.rw,
    body: { campaignId: fx.campaignId, items: [{ externalId: 'keep', label: 'Keep' }] },
  });
  recipientId = res.body.results[0].id;
}, 60_000);
afterAll(() => sys?.stop());

/** A fingerprint of everything the API can change. */
async function storeFingerprint(): Promise<string> {
  const db = new Client({ connectionString: sys.ns.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      `SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r.id), '')) AS h, count(*) AS n FROM recipients.recipients r`,
    );
    return `${rows[0].n}:${rows[0].h}`;
  } finally {
    await db.end();
  }
}

const junkJson = fc.oneof(
  fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
  fc
    .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { minKeys: 1, maxKeys: 4 })
    .map((d) => ({ ...d, unknownField: 1 })),
);
const badItem = fc.oneof(
  fc.record({ bogus: fc.jsonValue() }),
  fc.record({
    externalId: fc.oneof(fc.integer(), fc.constant(''), fc.string({ minLength: 192, maxLength: 200 })),
  }),
  fc.record({ label: fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.string())) }),
  fc.record({
    metadata: fc.oneof(
      fc.string(),
      fc.array(fc.jsonValue()),
      fc.constant({ 'bad key!': 'v' }),
      fc.constant({ k: { nested: true } }),
    ),
  }),
  fc.record({
    maxTotalInteractions: fc.oneof(
      fc.constant(0),
      fc.integer({ max: -1 }),
      // Finite only: JSON has no Infinity or NaN, and sends null (no limit, which is valid) for them.
      fc.double({ noInteger: true, noDefaultInfinity: true, noNaN: true }),
      fc.string(),
    ),
  }),
  fc.record({ windowSeconds: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ injectionMode: fc.string().filter((s) => s !== 'append' && s !== 'replace') }),
  fc.record({ isActive: fc.oneof(fc.string(), fc.integer()) }),
  fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
);
const createBody = fc.oneof(
  junkJson,
  fc.record({
    campaignId: fc.oneof(fc.integer(), fc.constant(null), fc.constant('')),
    items: fc.constant([{}]),
  }),
  fc.record({ items: fc.array(badItem, { minLength: 1, maxLength: 3 }) }),
  fc.constant(null).map(() => ({ campaignId: fx.campaignId, items: [] })),
  fc.array(badItem, { minLength: 1, maxLength: 5 }).map((items) => ({ campaignId: fx.campaignId, items })),
  fc
    .constant(null)
    .map(() => ({ campaignId: fx.campaignId, items: Array.from({ length: 201 }, () => ({})) })),
);
const patchBody = fc.oneof(
  junkJson,
  fc.constant({}),
  fc.record({ externalId: fc.string() }),
  fc.record({ metadata: fc.object() }),
  fc.record({ interactionCount: fc.integer() }),
  fc.record({ label: fc.oneof(fc.integer(), fc.string({ minLength: 192, maxLength: 200 })) }),
  fc.record({ maxInteractionsPerWindow: fc.integer({ min: 1, max: 5 }) }),
);
const bulkBody = fc.oneof(
  junkJson,
  fc.constant({ all: false }),
  fc.constant({ ids: [] }),
  fc.record({ ids: fc.array(fc.oneof(fc.integer(), fc.constant(null)), { minLength: 1, maxLength: 3 }) }),
  fc.constant({ ids: ['x'], all: true }),
);
const rawText = fc.oneof(
  fc.string(),
  fc.constant('{"campaignId":'),
  fc.constant('\u0000'),
  fc.constant('[1,2'),
);
const query = fc.dictionary(
  fc.constantFrom('campaignId', 'limit', 'offset', 'active', 'state', 'x'),
  fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('-1', '0', '201', '1e3', 'true', 'TRUE', '%', '')),
);
const authHeader = fc.oneof(
  fc.constant<string | undefined>(undefined),
  fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
  fc.constantFrom('Bearer', 'bearer ', 'Basic Zm9vOmJhcg==', 'Bearer ork_\u00ff'),
);

type Req = {
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  contentType?: string;
  auth?: string | null;
  query?: Record<string, string>;
};

const request: fc.Arbitrary<Req> = fc.oneof(
  createBody.map((body) => ({ method: 'POST', path: '/recipients', body })),
  patchBody.map((body) => ({ method: 'PATCH', path: `/recipients/${recipientId}`, body })),
  bulkBody.map((body) => ({ method: 'POST', path: '/recipients/bulk-delete', body })),
  rawText.map((raw) => ({ method: 'POST', path: '/recipients', raw })),
  rawText.map((raw) => ({ method: 'PATCH', path: `/recipients/${recipientId}`, raw })),
  fc
    .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data')
    .map((contentType) => ({
      method: 'POST',
      path: '/recipients',
      raw: 'campaignId=x',
      contentType,
    })),
  query.map((q) => ({ method: 'GET', path: '/recipients', query: q })),
  query.map((q) => ({ method: 'GET', path: '/campaigns', query: q })),
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
      authHeader,
      fc.constantFrom('/recipients', `/recipients/${recipientId}`, '/recipients/bulk-delete', '/campaigns'),
    )
    .map(([method, auth, path]) => ({
      method,
      path,
      auth: auth ?? null,
      body: method === 'GET' || method === 'DELETE' ? undefined : { campaignId: fx.campaignId, items: [{}] },
    })),
  fc.constantFrom('PUT', 'DELETE').map((method) => ({ method, path: '/recipients' })),
  fc.string({ maxLength: 10 }).map((s) => ({ method: 'GET', path: `/${encodeURIComponent(s)}x/unknown` })),
  // Any character at all, in ids, field names and values: gRPC metadata and PostgreSQL text each
  // refuse some (non-ASCII, NUL), and neither may turn into a 5xx.
  fc
    .tuple(
      fc.constantFrom('GET', 'PATCH', 'DELETE'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
    )
    .map(([method, id]) => ({
      method,
      path: `/recipients/${encodeURIComponent(id)}`,
      body: method === 'PATCH' ? { label: 'x' } : undefined,
    })),
  fc
    .dictionary(fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }), fc.jsonValue(), {
      minKeys: 1,
      maxKeys: 2,
    })
    .map((body) => ({ method: 'PATCH', path: `/recipients/${recipientId}`, body })),
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: 8 })
    .map((campaignId) => ({ method: 'GET', path: '/recipients', query: { campaignId } })),
  fc.string({ unit: 'binary', maxLength: 8 }).map((label) => ({
    method: 'POST',
    path: '/recipients',
    body: { campaignId: fx.campaignId, items: [{ label: `${label}\u0000` }] },
  })),
);

it('refuses malformed requests with a 4xx error body and changes nothing', async () => {
  const before = await storeFingerprint();
  await fc.assert(
    fc.asyncProperty(request, async (req) => {
      const qs = req.query ? `?${new URLSearchParams(req.query)}` : '';
      const headers: Record<string, string> = {};
      if (req.auth !== null) headers.authorization = req.auth ?? `Bearer ${fx.keys.rw}`;
      if (req.contentType) headers['content-type'] = req.contentType;
      const res = await http(
        req.method,
        `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}${req.path}${qs}`,
        {
          headers,
          body: req.raw ?? (req.body === undefined ? undefined : JSON.stringify(req.body)),
        },
      );
      // GETs may legitimately succeed; every other request here must be refused.
      if (req.method !== 'GET') expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      if (res.status >= 400 && res.status !== 422) {
        expect(Object.keys(res.body ?? {}).sort()).toEqual(['code', 'details', 'error', 'hint', 'retryable']);
      }
    }),
    { numRuns: 250 },
  );
  expect(await storeFingerprint()).toBe(before);
}, 120_000);
