import { createHash } from 'node:crypto';
import { type CampaignSnapshot, subjects, type UsageAdmitted } from '@outreach/contracts';
import { fromServiceError, publishJson, type RunningService, streamNames, within } from '@outreach/platform';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { Client, Pool } from 'pg';
import {
  addMembership,
  createOperator,
  listOperatorProjects,
  listProjectOperators,
} from '../src/dashboard/operators.service';
import {
  ADMIN_TOKEN,
  adminClient,
  createTestNamespace,
  eventually,
  grpcClient,
  manualClock,
  serviceEnv,
  start,
} from './helpers';

type Ns = Awaited<ReturnType<typeof createTestNamespace>>;

let ns: Ns;
let service: RunningService;
let api: ReturnType<typeof adminClient>;
let rpc: ReturnType<typeof grpcClient>;
let nc: NatsConnection;
let db: Client;
const clock = manualClock('2026-05-10T12:00:00.000Z');
const codec = JSONCodec();

beforeAll(async () => {
  ns = await createTestNamespace();
  service = await start(serviceEnv(ns), { clock: clock.now });
  api = adminClient(service);
  rpc = grpcClient(service);
  nc = await connect({ servers: ns.env.NATS_URL });
  db = new Client({ connectionString: ns.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  rpc?.client.close();
  await db?.end();
  await nc?.close();
  await service?.stop();
  await ns?.cleanup();
});

async function project(name = 'Acme') {
  const res = await api('POST', '/admin/v1/projects', { name });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function device(p: string, extra: Record<string, unknown> = {}) {
  const res = await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web', ...extra });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function campaign(p: string, d: string, extra: Record<string, unknown> = {}) {
  const res = await api('POST', `/admin/v1/projects/${p}/campaigns`, {
    name: 'Spring',
    deviceId: d,
    startDate: '2026-05-20T00:00:00.000Z',
    endDate: '2026-06-20T00:00:00.000Z',
    budgetMode: 'metered',
    pricePerConversation: 25,
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('admin authentication', () => {
  it('refuses a missing, malformed or wrong token with 401 and the catalogue body', async () => {
    for (const token of ['', 'wrong-token', `${ADMIN_TOKEN}x`]) {
      const res = await adminClient(service, token)('GET', '/admin/v1/projects');
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized', retryable: false });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    const basic = await adminClient(service, '')('GET', '/admin/v1/projects', undefined, {
      authorization: `Basic ${ADMIN_TOKEN}`,
    });
    expect(basic.status).toBe(401);
    expect((await api('GET', '/admin/v1/projects')).status).toBe(200);
  });

  it('asks for the token whatever the case of the path, and matches only the path as written', async () => {
    for (const path of [
      '/ADMIN/v1/projects',
      '/Admin/v1/projects',
      '/admin/V1/projects',
      '/admin/v1/PROJECTS',
    ]) {
      const anonymous = await adminClient(service, '')('GET', path);
      expect([path, anonymous.status]).toEqual([path, 401]);
    }
    // With the token, a path in other letters is no route (as in the rest of the API).
    expect((await api('GET', '/admin/v1/PROJECTS')).status).toBe(404);
    expect((await api('GET', '/ADMIN/v1/projects')).status).toBe(404);
  });

  it('matches no route for a path with a trailing slash, after asking for the token', async () => {
    const p = await project();
    for (const [method, path] of [
      ['GET', '/admin/v1/projects/'],
      ['POST', '/admin/v1/projects/'],
      ['GET', `/admin/v1/projects/${p}/`],
      ['GET', `/admin/v1/projects/${p}/devices/`],
      ['PUT', '/admin/v1/projects/'],
    ]) {
      expect([method, path, (await adminClient(service, '')(method, path)).status]).toEqual([
        method,
        path,
        401,
      ]);
      const r = await api(method, path, method === 'POST' ? { name: 'Slash' } : undefined);
      expect([method, path, r.status, r.body.code]).toEqual([method, path, 404, 'not_found']);
    }
    expect(
      (await api('GET', '/admin/v1/projects')).body.projects.map((x: { name: string }) => x.name),
    ).not.toContain('Slash');
  });

  it('serves health without a token and 404/405 with the catalogue', async () => {
    const live = await fetch(`http://127.0.0.1:${service.ports.http}/livez`);
    expect(live.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${service.ports.http}/readyz`);
    expect(ready.status).toBe(200);
    expect((await api('GET', '/admin/v1/nothing')).body.code).toBe('not_found');
    const wrong = await api('PUT', '/admin/v1/projects');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('POST');
  });
});

describe('validation', () => {
  it('refuses bad bodies with JSON pointers and rules', async () => {
    const p = await project();
    const d = await device(p);
    const cases: Array<[string, string, unknown, string, string]> = [
      ['POST', '/admin/v1/projects', { name: 'x', extra: 1 }, '/extra', 'additionalProperties'],
      ['POST', '/admin/v1/projects', {}, '/name', 'required'],
      ['POST', '/admin/v1/projects', { name: 5 }, '/name', 'type'],
      ['POST', `/admin/v1/projects/${p}/api-keys`, { name: 'k', scopes: ['admin'] }, '/scopes/0', 'enum'],
      ['POST', `/admin/v1/projects/${p}/api-keys`, { name: 'k', scopes: [] }, '/scopes', 'minItems'],
      [
        'POST',
        `/admin/v1/projects/${p}/api-keys`,
        { name: 'k', scopes: ['recipients:read'], expiresAt: '2020-01-01T00:00:00.000Z' },
        '/expiresAt',
        'future',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/api-keys`,
        { name: 'k', scopes: ['recipients:read'], rateLimitPerMinute: 0 },
        '/rateLimitPerMinute',
        'minimum',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/devices`,
        { name: 'd', ipAllowList: ['10.0.0.0/33'] },
        '/ipAllowList/0',
        'format',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/devices`,
        { name: 'd', knowledge: [{ title: 't' }] },
        '/knowledge/0/content',
        'required',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/devices`,
        { name: 'd', styling: { logoUrl: 'javascript:alert(1)' } },
        '/styling/logoUrl',
        'format',
      ],
      [
        'PATCH',
        `/admin/v1/projects/${p}/devices/${d}`,
        { styling: { logoUrl: 'data:image/svg+xml,<svg/>' } },
        '/styling/logoUrl',
        'format',
      ],
      // A right-to-left override in the page's heading would reverse what customers read.
      [
        'POST',
        `/admin/v1/projects/${p}/devices`,
        { name: 'd', styling: { title: 'Help \u202Egnp.exe' } },
        '/styling/title',
        'format',
      ],
      [
        'PATCH',
        `/admin/v1/projects/${p}/devices/${d}`,
        { styling: { title: 'Help \u2067x\u2069' } },
        '/styling/title',
        'format',
      ],
      // A lone UTF-16 surrogate has no UTF-8 form: refused as the field's problem, never stored as
      // U+FFFD nor failing the statement (a title's jsonb refused it with a 500).
      ['POST', '/admin/v1/projects', { name: 'p\ud800x' }, '/name', 'format'],
      [
        'POST',
        `/admin/v1/projects/${p}/devices`,
        { name: 'd', styling: { title: 'Help \udfff' } },
        '/styling/title',
        'format',
      ],
      ['PATCH', `/admin/v1/projects/${p}/devices/${d}`, { persona: 'Kind \ud83d' }, '/persona', 'format'],
      [
        'PATCH',
        `/admin/v1/projects/${p}/devices/${d}`,
        { knowledge: [{ title: 'Hours', content: 'Open \u0000' }] },
        '/knowledge/0/content',
        'format',
      ],
      ['PATCH', `/admin/v1/projects/${p}/devices/${d}`, {}, '', 'minProperties'],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: '2026-06-01T00:00:00.000Z',
          endDate: '2026-05-01T00:00:00.000Z',
          budgetMode: 'metered',
        },
        '/endDate',
        'afterStartDate',
      ],
      // A cap of 0 would hold no link at all: at least 1, or null for none.
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: '2026-05-01T00:00:00.000Z',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'metered',
          recipientCap: 0,
        },
        '/recipientCap',
        'minimum',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: 'dev_nope',
          startDate: '2026-05-01T00:00:00.000Z',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'metered',
        },
        '/deviceId',
        'exists',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: '2026-05-01T00:00:00.000Z',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'metered',
          pricePerConversation: 1.5,
        },
        '/pricePerConversation',
        'type',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: 'soon',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'metered',
        },
        '/startDate',
        'format',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: '2026-05-01T00:00:00.000Z',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'fixed',
        },
        '/fixedPrice',
        'required',
      ],
      [
        'POST',
        `/admin/v1/projects/${p}/campaigns`,
        {
          name: 'c',
          deviceId: d,
          startDate: '2026-05-01T00:00:00.000Z',
          endDate: '2026-06-01T00:00:00.000Z',
          budgetMode: 'prepaid',
        },
        '/budgetMode',
        'enum',
      ],
    ];
    for (const [method, path, body, pointer, rule] of cases) {
      const res = await api(method, path, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 400,
        code: 'invalid_request',
      });
      expect(res.body.details.problems).toEqual(
        expect.arrayContaining([expect.objectContaining({ pointer, rule })]),
      );
    }
  });

  it('refuses malformed JSON, non-JSON bodies and bad query parameters', async () => {
    const p = await project();
    const malformed = await api('POST', '/admin/v1/projects', '{"name":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.details.reason).toBe('malformed_json');
    const text = await api('POST', '/admin/v1/projects', 'name', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const state = await api('GET', `/admin/v1/projects/${p}/campaigns?state=paused`);
    expect(state.status).toBe(400);
    expect(state.body.details.problems[0].pointer).toBe('/state');
    const month = await api('GET', `/admin/v1/projects/${p}/statement?month=2026-13`);
    expect(month.status).toBe(400);
    expect(month.body.details.problems[0].pointer).toBe('/month');
    expect((await api('GET', '/admin/v1/projects/prj_missing/devices')).status).toBe(404);
    expect((await api('GET', '/admin/v1/projects/prj_missing')).body.code).toBe('not_found');
    expect((await api('GET', `/admin/v1/projects/${p}`)).body).toMatchObject({ id: p, name: 'Acme' });
  });
});

describe('devices', () => {
  it('creates with defaults, validates IPv4 and IPv6 CIDRs, patches and lists', async () => {
    const p = await project();
    const created = await api('POST', `/admin/v1/projects/${p}/devices`, {
      name: 'Kiosk',
      ipAllowList: ['10.0.0.0/8', '2001:db8::/32'],
      knowledge: [{ title: 'Hours', content: '9 to 5' }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      projectId: p,
      isActive: true,
      ipAllowList: ['10.0.0.0/8', '2001:db8::/32'],
      languages: ['en'],
      defaultLanguage: 'en',
      voice: { enabled: false },
      version: 1,
    });
    expect(created.body.knowledge[0]).toMatchObject({ title: 'Hours', content: '9 to 5' });
    const id = created.body.id;
    const bad = await api('PATCH', `/admin/v1/projects/${p}/devices/${id}`, {
      ipAllowList: ['2001:db8::/129'],
    });
    expect(bad.status).toBe(400);
    const lang = await api('PATCH', `/admin/v1/projects/${p}/devices/${id}`, { defaultLanguage: 'fr' });
    expect(lang.body.details.problems[0]).toMatchObject({ pointer: '/defaultLanguage' });
    const patched = await api('PATCH', `/admin/v1/projects/${p}/devices/${id}`, { isActive: false });
    expect(patched.body).toMatchObject({ isActive: false, version: 2, name: 'Kiosk' });
    expect((await api('GET', `/admin/v1/projects/${p}/devices/${id}`)).body.isActive).toBe(false);
    expect((await api('GET', `/admin/v1/projects/${p}/devices`)).body.devices).toHaveLength(1);
    const other = await project('Other');
    expect((await api('GET', `/admin/v1/projects/${other}/devices/${id}`)).status).toBe(404);
    // The snapshot reaches the state stream.
    const jsm = await nc.jetstreamManager();
    const msg = await eventually(() =>
      jsm.streams
        .getMessage(streamNames(ns.natsPrefix).state, {
          last_by_subj: subjects(ns.natsPrefix).deviceState(id),
        })
        .catch(() => undefined),
    );
    expect(codec.decode(msg.data)).toMatchObject({ id, isActive: false, version: 2 });
  });
});

describe('a device too large for its snapshot', () => {
  /** The device's snapshot on the state stream once it has reached `version`. */
  const snapshot = async (id: string, version: number) => {
    const jsm = await nc.jetstreamManager();
    return eventually(async () => {
      const msg = await jsm.streams
        .getMessage(streamNames(ns.natsPrefix).state, {
          last_by_subj: subjects(ns.natsPrefix).deviceState(id),
        })
        .catch(() => undefined);
      const decoded = msg && (codec.decode(msg.data) as { version: number; name: string });
      return decoded?.version === version ? decoded : undefined;
    });
  };
  // 27 entries of 20,000 characters: each entry is valid, together over 512 KiB, under the 1 MiB body limit.
  const knowledge = Array.from({ length: 27 }, (_, i) => ({
    title: `Entry ${i}`,
    content: 'x'.repeat(20_000),
  }));

  it('is refused naming its size, and changes after it still reach the state stream', async () => {
    const p = await project();
    const big = await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Big', knowledge });
    expect(big.status).toBe(400);
    expect(big.body.details.problems).toEqual([
      {
        pointer: '/knowledge',
        rule: 'maxBytes',
        message:
          'makes the device 530 KiB, over its limit of 512 KiB for knowledge, persona and instructions together',
      },
    ]);
    expect((await api('GET', `/admin/v1/projects/${p}/devices`)).body.devices).toHaveLength(0);
    const small = await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Small' });
    expect(small.status).toBe(201);
    expect(await snapshot(small.body.id, 1)).toMatchObject({ name: 'Small' });
  });

  it('already in the outbox (an older version accepted it) is set aside, and the changes behind it go out', async () => {
    const p = await project();
    const { rows } = await db.query(
      `INSERT INTO campaigns.outbox (subject, payload) VALUES ($1, $2) RETURNING id`,
      [
        subjects(ns.natsPrefix).deviceState('dev_oversized'),
        JSON.stringify({ knowledge: 'x'.repeat(1_100_000) }),
      ],
    );
    const after = await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'After' });
    expect(await snapshot(after.body.id, 1)).toMatchObject({ name: 'After' });
    // A new change is relayed at its commit, the older row by the sweep: either may come first.
    const state = async () =>
      (
        await db.query('SELECT sent_at IS NOT NULL AS sent, refused FROM campaigns.outbox WHERE id = $1', [
          rows[0].id,
        ])
      ).rows[0];
    await eventually(async () => (await state()).sent).catch(() => undefined);
    expect(await state()).toEqual({ sent: true, refused: 'max_payload' });
  });

  it('is refused on a patch, which leaves the device as it was', async () => {
    const p = await project();
    const id = await device(p);
    const patch = await api('PATCH', `/admin/v1/projects/${p}/devices/${id}`, { knowledge });
    expect(patch.status).toBe(400);
    expect(patch.body.details.problems[0]).toMatchObject({ pointer: '/knowledge', rule: 'maxBytes' });
    expect((await api('GET', `/admin/v1/projects/${p}/devices/${id}`)).body).toMatchObject({
      version: 1,
      knowledge: [],
    });
    const renamed = await api('PATCH', `/admin/v1/projects/${p}/devices/${id}`, { name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(await snapshot(id, 2)).toMatchObject({ name: 'Renamed' });
  });
});

describe('campaign lifecycle', () => {
  it('derives state and timing from facts and the clock, and refuses invalid transitions', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const id = await campaign(p, d);
    const path = `/admin/v1/projects/${p}/campaigns/${id}`;
    let c = (await api('GET', path)).body;
    expect(c).toMatchObject({ state: 'draft', launchedAt: null, haltedAt: null, version: 1 });
    expect(c.timing).toEqual({
      state: 'draft',
      now: '2026-05-10T12:00:00.000Z',
      startsInSeconds: null,
      runningForSeconds: null,
      endedAgoSeconds: null,
    });
    // A draft cannot be halted.
    expect((await api('POST', `${path}/halt`)).status).toBe(409);

    const patched = await api('PATCH', path, { name: 'Spring sale', recipientCap: 100 });
    expect(patched.body).toMatchObject({ name: 'Spring sale', recipientCap: 100, version: 2 });

    const launched = await api('POST', `${path}/launch`);
    expect(launched.status).toBe(200);
    expect(launched.body).toMatchObject({ state: 'upcoming', launchedAt: '2026-05-10T12:00:00.000Z' });
    expect(launched.body.timing.startsInSeconds).toBe(9.5 * 24 * 3600);
    const again = await api('POST', `${path}/launch`);
    expect(again.status).toBe(409);
    expect(again.body.details.reason).toBe('already_launched');

    // Still editable while upcoming.
    expect((await api('PATCH', path, { name: 'Spring sale 2' })).status).toBe(200);
    const backdated = await api('PATCH', path, {
      startDate: '2026-05-01T00:00:00.000Z',
      endDate: '2026-05-02T00:00:00.000Z',
    });
    expect(backdated.status).toBe(400);
    expect(backdated.body.details.problems[0]).toMatchObject({ pointer: '/endDate', rule: 'future' });

    clock.set('2026-05-21T00:00:30.500Z');
    c = (await api('GET', path)).body;
    expect(c.state).toBe('active');
    expect(c.timing).toMatchObject({
      runningForSeconds: 86430,
      startsInSeconds: null,
      endedAgoSeconds: null,
    });
    const notEditable = await api('PATCH', path, { name: 'late' });
    expect(notEditable.status).toBe(409);
    expect(notEditable.body).toMatchObject({ code: 'conflict', details: { reason: 'not_editable' } });

    const halted = await api('POST', `${path}/halt`);
    expect(halted.status).toBe(200);
    expect(halted.body).toMatchObject({ state: 'completed', haltedAt: '2026-05-21T00:00:30.500Z' });
    clock.advance(90_000);
    c = (await api('GET', path)).body;
    expect(c.timing.endedAgoSeconds).toBe(90);
    expect((await api('POST', `${path}/halt`)).status).toBe(409);
    expect((await api('POST', `${path}/launch`)).status).toBe(409);

    // gRPC sees the same derived facts.
    const g = await rpc.call('GetCampaign', { projectId: p, campaignId: id });
    expect(g).toMatchObject({
      id,
      state: 'completed',
      haltedAt: '2026-05-21T00:00:30.500Z',
      recipientCap: 100,
    });
    expect(g.timing).toMatchObject({ state: 'completed', endedAgoSeconds: 90 });
    expect(g.timing.startsInSeconds).toBeUndefined();
    clock.set('2026-05-10T12:00:00.000Z');
  });

  it('refuses launching a campaign whose end date has passed; completes at endDate', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const past = await campaign(p, d, {
      startDate: '2026-04-01T00:00:00.000Z',
      endDate: '2026-05-01T00:00:00.000Z',
    });
    clock.advance(1); // ListCampaigns orders by createdAt first
    const refused = await api('POST', `/admin/v1/projects/${p}/campaigns/${past}/launch`);
    expect(refused.status).toBe(409);
    expect(refused.body.details.reason).toBe('end_date_passed');

    const running = await campaign(p, d, {
      startDate: '2026-05-01T00:00:00.000Z',
      endDate: '2026-05-11T00:00:00.000Z',
    });
    expect((await api('POST', `/admin/v1/projects/${p}/campaigns/${running}/launch`)).body.state).toBe(
      'active',
    );
    clock.set('2026-05-11T00:00:05.000Z');
    const done = (await api('GET', `/admin/v1/projects/${p}/campaigns/${running}`)).body;
    expect(done.timing).toMatchObject({ state: 'completed', endedAgoSeconds: 5 });

    const list = await rpc.call('ListCampaigns', { projectId: p });
    expect(list.campaigns.map((c: { id: string }) => c.id)).toEqual([past, running]);
    const completed = await rpc.call('ListCampaigns', { projectId: p, state: 'completed' });
    expect(completed.campaigns.map((c: { id: string }) => c.id)).toEqual([running]);
    const http = await api('GET', `/admin/v1/projects/${p}/campaigns?state=draft`);
    expect(http.body.campaigns.map((c: { id: string }) => c.id)).toEqual([past]);
    await expect(rpc.call('ListCampaigns', { projectId: p, state: 'paused' })).rejects.toMatchObject({
      code: 3,
    });
    const other = await project('Other');
    const nf = await rpc.call('GetCampaign', { projectId: other, campaignId: running }).catch((e) => e);
    expect(fromServiceError(nf).code).toBe('not_found');
    clock.set('2026-05-10T12:00:00.000Z');
  });
});

describe('deleting a campaign', () => {
  it('deletes a draft: gone from every read, its tombstone on the state stream; refuses anything launched', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const draft = await campaign(p, d);
    const kept = await campaign(p, d, { name: 'Kept' });
    await api('POST', `/admin/v1/projects/${p}/campaigns/${draft}/top-offs`, { conversations: 10 });
    const path = `/admin/v1/projects/${p}/campaigns/${draft}`;

    const other = await project('Other');
    expect((await api('DELETE', `/admin/v1/projects/${other}/campaigns/${draft}`)).status).toBe(404);
    const deleted = await api('DELETE', path);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, id: draft });

    expect((await api('GET', path)).status).toBe(404);
    expect((await api('DELETE', path)).status).toBe(404);
    expect((await api('PATCH', path, { name: 'back' })).status).toBe(404);
    expect((await api('POST', `${path}/launch`)).status).toBe(404);
    expect((await api('POST', `${path}/top-offs`, { conversations: 1 })).status).toBe(404);
    expect((await api('GET', `${path}/statement?month=2026-05`)).status).toBe(404);
    const listed = (await api('GET', `/admin/v1/projects/${p}/campaigns`)).body.campaigns;
    expect(listed.map((c: { id: string }) => c.id)).toEqual([kept]);
    const statement = (await api('GET', `/admin/v1/projects/${p}/statement?month=2026-05`)).body;
    expect(statement.campaigns).toEqual([]);
    const g = await rpc.call('GetCampaign', { projectId: p, campaignId: draft }).catch((e) => e);
    expect(fromServiceError(g).code).toBe('not_found');
    const l = await rpc.call('ListCampaigns', { projectId: p });
    expect(l.campaigns.map((c: { id: string }) => c.id)).toEqual([kept]);

    // The tombstone outlives the campaign on the stream, so replicas learn it is gone.
    const jsm = await nc.jetstreamManager();
    await eventually(async () => {
      const last = await jsm.streams.getMessage(streamNames(ns.natsPrefix).state, {
        last_by_subj: subjects(ns.natsPrefix).campaignState(draft),
      });
      const s = codec.decode(last.data) as CampaignSnapshot;
      return s.deletedAt === '2026-05-10T12:00:00.000Z' && s.version === 3;
    });

    // A campaign service of the release before, which knows no deleted_at, cannot launch it either.
    await expect(
      db.query('UPDATE campaigns.campaigns SET launched_at = now() WHERE id = $1', [draft]),
    ).rejects.toThrow(/campaigns_deleted_never_launched/);

    // The project's activity has each change, as the admin API's.
    const recorded = async (id: string) =>
      (
        await db.query(
          'SELECT actor, action, target_name AS name, detail FROM campaigns.project_activity WHERE target_id = $1 ORDER BY seq',
          [id],
        )
      ).rows;
    expect(await recorded(draft)).toEqual([
      { actor: 'admin API', action: 'campaign.created', name: 'Spring', detail: '' },
      { actor: 'admin API', action: 'campaign.topped_off', name: 'Spring', detail: '10 conversations' },
      { actor: 'admin API', action: 'campaign.deleted', name: 'Spring', detail: '' },
    ]);

    const kpath = `/admin/v1/projects/${p}/campaigns/${kept}`;
    await api('POST', `${kpath}/launch`);
    const refused = await api('DELETE', kpath);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'conflict',
      details: { reason: 'not_deletable', state: 'upcoming' },
    });
    expect((await api('GET', kpath)).status).toBe(200);
    // A refused change is recorded nowhere: its record goes with its transaction.
    expect((await recorded(kept)).map((r) => r.action)).toEqual(['campaign.created', 'campaign.launched']);
    // The admin API reads the project's activity, newest first, a page at a time.
    const first = await api('GET', `/admin/v1/projects/${p}/activity?limit=2`);
    expect(first.status).toBe(200);
    expect(
      first.body.entries.map((e: { action: string; targetId: string }) => [e.action, e.targetId]),
    ).toEqual([
      ['campaign.launched', kept],
      ['campaign.deleted', draft],
    ]);
    expect(first.body.entries[0]).toMatchObject({ actor: 'admin API', targetName: 'Kept', detail: '' });
    expect(first.body.nextBefore).toBe(first.body.entries[1].seq);
    // A change made meanwhile does not shift the next page: it is read from a position.
    expect((await api('PATCH', kpath, { recipientCap: 5 })).status).toBe(200);
    const rest = await api(
      'GET',
      `/admin/v1/projects/${p}/activity?limit=200&before=${first.body.nextBefore}`,
    );
    const shown = first.body.entries.map((e: { seq: number }) => e.seq);
    expect(rest.body.entries.filter((e: { seq: number }) => shown.includes(e.seq))).toEqual([]);
    expect(rest.body.entries.at(-1)).toMatchObject({ action: 'project.created', targetId: p });
    expect(rest.body.nextBefore).toBe(null);
    expect((await api('GET', `/admin/v1/projects/${p}/activity?limit=0`)).status).toBe(400);
    expect((await api('GET', `/admin/v1/projects/${p}/activity?before=1e21`)).status).toBe(400);
    expect((await api('GET', `/admin/v1/projects/${p}/activity?offset=2`)).status).toBe(400);

    // The record is part of the change: a change whose record fails is not made.
    await db.query(`CREATE FUNCTION campaigns.refuse_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'record refused'; END $$`);
    await db.query(`CREATE TRIGGER refuse_record BEFORE INSERT ON campaigns.project_activity
      FOR EACH ROW WHEN (NEW.target_name = 'Unrecorded') EXECUTE FUNCTION campaigns.refuse_record()`);
    try {
      expect((await api('PATCH', kpath, { name: 'Unrecorded' })).status).toBe(500);
    } finally {
      await db.query('DROP TRIGGER refuse_record ON campaigns.project_activity');
      await db.query('DROP FUNCTION campaigns.refuse_record()');
    }
    expect((await api('GET', kpath)).body).toMatchObject({ name: 'Kept', recipientCap: 5 });
    expect((await api('GET', '/admin/v1/projects/prj_none/activity')).status).toBe(404);
  });

  it('records which fields an edit changed, the old name with them, and nothing for an edit that changed none', async () => {
    const p = await project();
    const d = await device(p);
    const c = await campaign(p, d);
    const cpath = `/admin/v1/projects/${p}/campaigns/${c}`;
    const dpath = `/admin/v1/projects/${p}/devices/${d}`;
    const before = (await api('GET', cpath)).body;
    const details = async (id: string) =>
      (
        await db.query(
          "SELECT detail FROM campaigns.project_activity WHERE target_id = $1 AND action LIKE '%.edited' ORDER BY seq",
          [id],
        )
      ).rows.map((r) => r.detail);

    const edited = await api('PATCH', cpath, {
      name: 'Summer',
      endDate: new Date(Date.parse(before.endDate) + 86_400_000).toISOString(),
      recipientCap: 50,
    });
    expect(edited.status).toBe(200);
    // The same values again, an instant written another way among them: no new version, no record.
    const again = await api('PATCH', cpath, {
      name: 'Summer',
      startDate: before.startDate.replace('.000Z', 'Z'),
      recipientCap: 50,
    });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(edited.body.version);
    expect(await details(c)).toEqual(['name was “Spring”; end date; recipient cap']);

    const knowledge = [{ title: 'Opening hours', content: 'Nine to five.' }];
    expect((await api('PATCH', dpath, { knowledge, isActive: false })).status).toBe(200);
    // The same knowledge sent again gets new entry ids, yet says the same: nothing changed.
    const resent = await api('PATCH', dpath, { knowledge });
    expect(resent.status).toBe(200);
    expect((await api('PATCH', dpath, { isActive: true, persona: 'You are Ada.' })).status).toBe(200);
    expect(await details(d)).toEqual(['turned off; knowledge', 'turned on; persona']);
  });
});

describe('deleting a device', () => {
  it('deletes a device no campaign uses (deleted drafts aside), and refuses one in use naming its campaigns', async () => {
    const p = await project();
    const used = await device(p, { name: 'Used' });
    const free = await device(p, { name: 'Free' });
    const c = await campaign(p, used);
    const draft = await campaign(p, free);
    const devices = `/admin/v1/projects/${p}/devices`;

    const refused = await api('DELETE', `${devices}/${used}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'conflict',
      details: { reason: 'device_in_use', deviceId: used, campaignIds: [c] },
    });
    expect((await api('DELETE', `${devices}/${free}`)).body.details).toMatchObject({ campaignIds: [draft] });
    expect((await api('DELETE', `/admin/v1/projects/${p}/campaigns/${draft}`)).status).toBe(200);
    expect((await api('DELETE', `/admin/v1/projects/${await project('Other')}/devices/${free}`)).status).toBe(
      404,
    );

    await api('PATCH', `${devices}/${free}`, {
      persona: 'You sell our secret plan.',
      customInstructions: 'Mention the 40% discount.',
      knowledge: [{ title: 'Prices', content: 'The plan costs 9 a month.' }],
      styling: { title: 'Acme' },
    });
    const deleted = await api('DELETE', `${devices}/${free}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, id: free });
    // What the operator wrote is erased: in the row kept for the deleted draft, and in the last
    // snapshot the state stream (and every link runtime) holds.
    const { rows } = await db.query(
      'SELECT persona, custom_instructions, knowledge, styling, is_active FROM campaigns.devices WHERE id = $1',
      [free],
    );
    expect(rows[0]).toEqual({
      persona: '',
      custom_instructions: '',
      knowledge: [],
      styling: {},
      is_active: false,
    });
    const jsm = await nc.jetstreamManager();
    await eventually(async () => {
      const last = await jsm.streams.getMessage(streamNames(ns.natsPrefix).state, {
        last_by_subj: subjects(ns.natsPrefix).deviceState(free),
      });
      const snapshot = codec.decode(last.data) as {
        isActive: boolean;
        persona: string;
        knowledge: unknown[];
      };
      return !snapshot.isActive && snapshot.persona === '' && snapshot.knowledge.length === 0;
    });
    expect((await api('GET', `${devices}/${free}`)).status).toBe(404);
    expect((await api('PATCH', `${devices}/${free}`, { name: 'back' })).status).toBe(404);
    expect((await api('DELETE', `${devices}/${free}`)).status).toBe(404);
    expect((await api('GET', devices)).body.devices.map((x: { id: string }) => x.id)).toEqual([used]);
    // A campaign can no longer be made on it, nor moved to it.
    const create = await api('POST', `/admin/v1/projects/${p}/campaigns`, {
      name: 'Late',
      deviceId: free,
      startDate: '2026-05-20T00:00:00.000Z',
      endDate: '2026-06-20T00:00:00.000Z',
      budgetMode: 'metered',
    });
    expect(create.status).toBe(400);
    expect(create.body.details.problems).toEqual([
      { pointer: '/deviceId', rule: 'exists', message: 'is not a device of this project' },
    ]);
    const move = await api('PATCH', `/admin/v1/projects/${p}/campaigns/${c}`, { deviceId: free });
    expect(move.status).toBe(400);
  });
});

describe('a device deleted while a campaign is saved onto it', () => {
  it('fails the save that waited for the deletion, and refuses the deletion a save came before', async () => {
    const p = await project();
    const doomed = await device(p, { name: 'Doomed' });
    const tx = new Client({ connectionString: ns.databaseUrl });
    await tx.connect();
    try {
      // A deletion in progress: the device row locked, its deleted_at not yet committed.
      await tx.query('BEGIN');
      await tx.query('SELECT 1 FROM campaigns.devices WHERE id = $1 FOR UPDATE', [doomed]);
      const saving = api('POST', `/admin/v1/projects/${p}/campaigns`, {
        name: 'Onto it',
        deviceId: doomed,
        startDate: '2026-05-20T00:00:00.000Z',
        endDate: '2026-06-20T00:00:00.000Z',
        budgetMode: 'metered',
      });
      await new Promise((r) => setTimeout(r, 300));
      await tx.query('UPDATE campaigns.devices SET deleted_at = now() WHERE id = $1', [doomed]);
      await tx.query('COMMIT');
      const saved = await saving;
      expect(saved.status).toBe(400);
      expect(saved.body.details.problems[0]).toMatchObject({ pointer: '/deviceId', rule: 'exists' });

      // A save in progress: the device share-locked, its campaign not yet committed.
      const kept = await device(p, { name: 'Kept' });
      const c = await campaign(p, await device(p, { name: 'Before' }));
      await tx.query('BEGIN');
      await tx.query('SELECT 1 FROM campaigns.devices WHERE id = $1 FOR SHARE', [kept]);
      await tx.query('UPDATE campaigns.campaigns SET device_id = $2 WHERE id = $1', [c, kept]);
      const deleting = api('DELETE', `/admin/v1/projects/${p}/devices/${kept}`);
      await new Promise((r) => setTimeout(r, 300));
      await tx.query('COMMIT');
      expect((await deleting).status).toBe(409);
    } finally {
      await tx.end();
    }
  });
});

describe('list order', () => {
  const byteOrder = (ids: readonly string[]) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const idsOf = (items: { id?: string; campaignId?: string }[]) => items.map((i) => i.id ?? i.campaignId);

  /**
   * Makes rows of `table` at one instant until an English collation of its ids orders them
   * differently from byte order (otherwise a list would pass whichever order it used), then
   * expects each of `lists` in byte order.
   */
  async function expectByteOrder(
    table: string,
    make: () => Promise<string>,
    lists: Record<string, () => Promise<(string | undefined)[]>>,
  ) {
    clock.set('2026-05-10T12:00:00.000Z');
    // As a database created with an English locale would compare them (the test database is C).
    await db.query(`ALTER TABLE campaigns.${table} ALTER COLUMN id TYPE text COLLATE "en-x-icu"`);
    try {
      const ids: string[] = [];
      const english = async () =>
        (await db.query(`SELECT id FROM campaigns.${table} WHERE id = ANY($1) ORDER BY id`, [ids])).rows.map(
          (r) => r.id,
        );
      while (ids.length < 12 || JSON.stringify(await english()) === JSON.stringify(byteOrder(ids))) {
        if (ids.length >= 60) throw new Error('60 random ids ordered alike in both collations');
        ids.push(await make());
      }
      for (const [name, list] of Object.entries(lists)) {
        const listed = (await list()).filter((id) => id !== undefined && ids.includes(id));
        expect({ [name]: listed }).toEqual({ [name]: byteOrder(ids) });
      }
    } finally {
      await db.query(`ALTER TABLE campaigns.${table} ALTER COLUMN id TYPE text COLLATE "default"`);
    }
  }

  it('lists campaigns created at the same instant by id in byte order, whatever the database locale', async () => {
    const p = await project();
    const d = await device(p);
    // Fixed-price campaigns launched now: each bills in this month, so each has a statement line.
    const fixed = { budgetMode: 'fixed', pricePerConversation: null, fixedPrice: 100 };
    await expectByteOrder(
      'campaigns',
      async () => {
        const id = await campaign(p, d, fixed);
        expect((await api('POST', `/admin/v1/projects/${p}/campaigns/${id}/launch`)).status).toBe(200);
        return id;
      },
      {
        grpc: async () => idsOf((await rpc.call('ListCampaigns', { projectId: p })).campaigns),
        http: async () => idsOf((await api('GET', `/admin/v1/projects/${p}/campaigns`)).body.campaigns),
        statement: async () =>
          idsOf((await api('GET', `/admin/v1/projects/${p}/statement?month=2026-05`)).body.campaigns),
      },
    );
  });

  it('lists devices, API keys, projects and operators made at the same instant in byte order of their ids', async () => {
    const p = await project();
    await expectByteOrder('devices', () => device(p), {
      devices: async () => idsOf((await api('GET', `/admin/v1/projects/${p}/devices`)).body.devices),
    });
    const key = async () =>
      (await api('POST', `/admin/v1/projects/${p}/api-keys`, { name: 'k', scopes: ['recipients:read'] })).body
        .id as string;
    await expectByteOrder('api_keys', key, {
      apiKeys: async () => idsOf((await api('GET', `/admin/v1/projects/${p}/api-keys`)).body.apiKeys),
    });
    // The dashboard's lists: an operator's projects, a project's operators.
    const pool = new Pool({ connectionString: ns.databaseUrl, options: '-c search_path=campaigns' });
    try {
      const deps = { pool, clock: clock.now };
      const operator = await createOperator(deps, {
        email: 'order@example.com',
        password: 'long enough password',
      });
      await expectByteOrder(
        'projects',
        async () => {
          const id = await project();
          await addMembership(deps, operator.id, id);
          return id;
        },
        {
          projects: async () => idsOf((await api('GET', '/admin/v1/projects')).body.projects),
          operatorProjects: async () => idsOf(await listOperatorProjects(deps, operator.id)),
        },
      );
      let n = 0;
      const member = async () =>
        (
          await createOperator(deps, {
            email: `m${n++}@example.com`,
            password: 'long enough password',
            projectIds: [p],
          })
        ).id;
      await expectByteOrder('operators', member, {
        members: async () => idsOf(await listProjectOperators(deps, p)),
      });
    } finally {
      await pool.end();
    }
  });
});

describe('budgets', () => {
  it('adds top-offs capturing the price in force and reports the allowance', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const id = await campaign(p, d, { pricePerConversation: 30 });
    const path = `/admin/v1/projects/${p}/campaigns/${id}`;
    let a = await rpc.call('GetAllowance', { projectId: p, campaignId: id });
    expect(a).toEqual({ used: 0, exhausted: false });
    expect(a.included).toBeUndefined();

    const first = await api('POST', `${path}/top-offs`, { conversations: 2 });
    expect(first.status).toBe(201);
    expect(first.body.topOff).toMatchObject({ conversations: 2, pricePerConversation: 30 });
    const second = await api('POST', `${path}/top-offs`, { conversations: 3, pricePerConversation: 50 });
    expect(second.body.topOff.pricePerConversation).toBe(50);
    expect(second.body.campaign.allowance).toEqual({ used: 0, included: 5, remaining: 5, exhausted: false });
    expect(
      (await api('GET', path)).body.topOffs.map((t: { conversations: number }) => t.conversations),
    ).toEqual([2, 3]);
    expect((await api('POST', `${path}/top-offs`, { conversations: 0 })).status).toBe(400);

    // Usage arrives as UsageAdmitted events; a repeated conversation id counts once.
    const js = nc.jetstream();
    const usage = (n: number, startedAt: string): UsageAdmitted => ({
      conversationId: `cnv_${id}_${n}`,
      recipientId: 'rcp_1',
      campaignId: id,
      projectId: p,
      startedAt,
    });
    await publishJson(js, subjects(ns.natsPrefix).usageAdmitted, usage(1, '2026-05-21T10:00:00.000Z'));
    await publishJson(js, subjects(ns.natsPrefix).usageAdmitted, usage(1, '2026-05-21T10:00:00.000Z'));
    await publishJson(js, subjects(ns.natsPrefix).usageAdmitted, usage(2, '2026-05-22T10:00:00.000Z'));
    await publishJson(js, subjects(ns.natsPrefix).usageAdmitted, usage(3, '2026-06-02T10:00:00.000Z'));
    a = await eventually(async () => {
      const r = await rpc.call('GetAllowance', { projectId: p, campaignId: id });
      return r.used === 3 && r;
    });
    expect(a).toEqual({ used: 3, included: 5, remaining: 2, exhausted: false });
    await new Promise((r) => setTimeout(r, 300));
    expect((await rpc.call('GetAllowance', { projectId: p, campaignId: id })).used).toBe(3);
    const rows = await db.query(
      'SELECT count(*)::int AS n FROM campaigns.conversations WHERE campaign_id = $1',
      [id],
    );
    expect(rows.rows[0].n).toBe(3);

    for (const n of [4, 5, 6]) {
      await publishJson(js, subjects(ns.natsPrefix).usageAdmitted, usage(n, '2026-06-03T10:00:00.000Z'));
    }
    a = await eventually(async () => {
      const r = await rpc.call('GetAllowance', { projectId: p, campaignId: id });
      return r.used === 6 && r;
    });
    expect(a).toEqual({ used: 6, included: 5, remaining: 0, exhausted: true });

    // Billing: May draws 2 at 30; June 3 at 50 and 1 overage at the campaign price (30).
    const may = await api('GET', `${path}/statement?month=2026-05`);
    expect(may.body).toMatchObject({ conversations: 2, total: 60 });
    const june = await api('GET', `${path}/statement?month=2026-06`);
    expect(june.body).toMatchObject({ conversations: 4, total: 3 * 50 + 30 });
    const proj = await api('GET', `/admin/v1/projects/${p}/statement?month=2026-06`);
    expect(proj.body).toMatchObject({ projectId: p, total: 180 });
  });

  it('keeps fixed campaigns uncapped, refuses their top-offs and bills the flat total in the launch month', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const id = await campaign(p, d, { budgetMode: 'fixed', pricePerConversation: null, fixedPrice: 99_000 });
    const path = `/admin/v1/projects/${p}/campaigns/${id}`;
    const top = await api('POST', `${path}/top-offs`, { conversations: 10 });
    expect(top.status).toBe(409);
    expect(top.body.details.reason).toBe('not_metered');
    await api('POST', `${path}/launch`);
    expect((await api('GET', `${path}/statement?month=2026-05`)).body.total).toBe(99_000);
    expect((await api('GET', `${path}/statement?month=2026-06`)).body.total).toBe(0);
    expect(await rpc.call('GetAllowance', { projectId: p, campaignId: id })).toEqual({
      used: 0,
      exhausted: false,
    });
  });
});

describe('snapshots', () => {
  it('publishes every campaign change on the state stream with growing versions', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const d = await device(p);
    const id = await campaign(p, d);
    // Every JetStream publish also reaches plain subscribers: watch the subject live.
    const sub = nc.subscribe(subjects(ns.natsPrefix).campaignState(id));
    const seen: CampaignSnapshot[] = [];
    const collecting = (async () => {
      for await (const m of sub) {
        seen.push(codec.decode(m.data) as CampaignSnapshot);
        if (seen.at(-1)?.version === 5) break;
      }
    })();
    const path = `/admin/v1/projects/${p}/campaigns/${id}`;
    await api('PATCH', path, { name: 'renamed' });
    await api('POST', `${path}/top-offs`, { conversations: 10 });
    await api('POST', `${path}/launch`);
    await api('POST', `${path}/halt`);
    const timer = setTimeout(() => sub.unsubscribe(), 5000);
    await collecting;
    clearTimeout(timer);
    const versions = seen.map((s) => s.version);
    expect(versions.at(-1)).toBe(5);
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]);
    expect(seen.at(-1)).toMatchObject({
      id,
      name: 'renamed',
      includedConversations: 10,
      launchedAt: '2026-05-10T12:00:00.000Z',
      haltedAt: '2026-05-10T12:00:00.000Z',
    });
    const jsm = await nc.jetstreamManager();
    const last = await jsm.streams.getMessage(streamNames(ns.natsPrefix).state, {
      last_by_subj: subjects(ns.natsPrefix).campaignState(id),
    });
    expect((codec.decode(last.data) as CampaignSnapshot).version).toBe(5);
    // The relay marks rows sent right after publishing them.
    await eventually(async () => {
      const unsent = await db.query('SELECT count(*)::int AS n FROM campaigns.outbox WHERE sent_at IS NULL');
      return unsent.rows[0].n === 0;
    });
  });

  it('publishes after a database reset, which hands out outbox ids already used', async () => {
    const p = await project();
    clock.set('2026-05-10T12:00:00.000Z');
    const id = await campaign(p, await device(p));
    await eventually(async () => {
      const unsent = await db.query('SELECT count(*)::int AS n FROM campaigns.outbox WHERE sent_at IS NULL');
      return unsent.rows[0].n === 0;
    });
    // As after restoring an older backup: the ids of rows JetStream saw moments ago come again.
    await db.query('DELETE FROM campaigns.outbox');
    await db.query('ALTER SEQUENCE campaigns.outbox_id_seq RESTART WITH 1');
    await api('PATCH', `/admin/v1/projects/${p}/campaigns/${id}`, { name: 'after the reset' });
    const jsm = await nc.jetstreamManager();
    await eventually(async () => {
      const last = await jsm.streams.getMessage(streamNames(ns.natsPrefix).state, {
        last_by_subj: subjects(ns.natsPrefix).campaignState(id),
      });
      return (codec.decode(last.data) as CampaignSnapshot).name === 'after the reset';
    });
  });
});

describe('API keys', () => {
  it('shows the key once, stores its hash, verifies, expires and revokes', async () => {
    clock.set('2026-05-10T12:00:00.000Z');
    const p = await project();
    const created = await api('POST', `/admin/v1/projects/${p}/api-keys`, {
      name: 'CI',
      scopes: ['recipients:read', 'recipients:write'],
      expiresAt: '2026-05-11T00:00:00.000Z',
      rateLimitPerMinute: 120,
    });
    expect(created.status).toBe(201);
    const { key, id } = created.body;
    expect(key).toMatch(/^ork_[0-9A-Za-z]{40}$/);
    expect(created.body).toMatchObject({ prefix: key.slice(0, 10), rateLimitPerMinute: 120 });
    const hash = createHash('sha256').update(key).digest('hex');
    const stored = await db.query('SELECT key_hash FROM campaigns.api_keys WHERE id = $1', [id]);
    expect(stored.rows[0].key_hash).toBe(hash);
    expect(JSON.stringify(stored.rows)).not.toContain(key);

    const list = await api('GET', `/admin/v1/projects/${p}/api-keys`);
    expect(JSON.stringify(list.body)).not.toContain(key);
    expect(list.body.apiKeys[0]).toMatchObject({ id, lastUsedAt: null, revokedAt: null });

    const grant = await rpc.call('VerifyApiKey', { keyHash: hash });
    expect(grant).toEqual({
      keyId: id,
      projectId: p,
      scopes: ['recipients:read', 'recipients:write'],
      rateLimitPerMinute: 120,
      expiresAt: '2026-05-11T00:00:00.000Z',
    });
    const used = await api('GET', `/admin/v1/projects/${p}/api-keys`);
    expect(used.body.apiKeys[0].lastUsedAt).toBe('2026-05-10T12:00:00.000Z');
    // Within the minute lastUsedAt stays; after it, it moves.
    clock.advance(30_000);
    await rpc.call('VerifyApiKey', { keyHash: hash });
    expect((await api('GET', `/admin/v1/projects/${p}/api-keys`)).body.apiKeys[0].lastUsedAt).toBe(
      '2026-05-10T12:00:00.000Z',
    );
    clock.advance(31_000);
    await rpc.call('VerifyApiKey', { keyHash: hash });
    expect((await api('GET', `/admin/v1/projects/${p}/api-keys`)).body.apiKeys[0].lastUsedAt).toBe(
      '2026-05-10T12:01:01.000Z',
    );

    // A republish of every snapshot holds the keys table: a verification goes on without writing.
    const holder = new Client({ connectionString: ns.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE campaigns.api_keys IN SHARE MODE');
      clock.advance(61_000);
      expect(await within(rpc.call('VerifyApiKey', { keyHash: hash }), 3000)).toMatchObject({ keyId: id });
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    expect((await api('GET', `/admin/v1/projects/${p}/api-keys`)).body.apiKeys[0].lastUsedAt).toBe(
      '2026-05-10T12:01:01.000Z',
    );

    const unknown = await rpc.call('VerifyApiKey', { keyHash: 'a'.repeat(64) }).catch((e) => e);
    expect(fromServiceError(unknown).code).toBe('unauthorized');

    clock.set('2026-05-11T00:00:00.000Z');
    const expired = await rpc.call('VerifyApiKey', { keyHash: hash }).catch((e) => e);
    expect(fromServiceError(expired).code).toBe('unauthorized');
    clock.set('2026-05-10T12:00:00.000Z');

    const revoked = await api('DELETE', `/admin/v1/projects/${p}/api-keys/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toBe('2026-05-10T12:00:00.000Z');
    const afterRevoke = await rpc.call('VerifyApiKey', { keyHash: hash }).catch((e) => e);
    expect(fromServiceError(afterRevoke).code).toBe('unauthorized');
    const jsm = await nc.jetstreamManager();
    const msg = await eventually(async () => {
      const m = await jsm.streams
        .getMessage(streamNames(ns.natsPrefix).state, {
          last_by_subj: subjects(ns.natsPrefix).apiKeyState(id),
        })
        .catch(() => undefined);
      return m && (codec.decode(m.data) as { revoked: boolean }).revoked && m;
    });
    expect(codec.decode(msg.data)).toEqual({ id, projectId: p, revoked: true, version: 2 });
    expect((await api('DELETE', `/admin/v1/projects/${p}/api-keys/key_missing`)).status).toBe(404);
  });
});
