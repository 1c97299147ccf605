import {
  type ApiKeySnapshot,
  type CampaignSnapshot,
  type DeviceSnapshot,
  subjects,
} from '@outreach/contracts';
import { createLogger, ensureStreams, type RunningService, streamNames } from '@outreach/platform';
import { connect, type JetStreamManager, JSONCodec, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { republishForNewStream, type StateRepublisherDeps } from '../src/events/state-republisher';
import { adminClient, createTestNamespace, eventually, serviceEnv, start } from './helpers';

type Ns = Awaited<ReturnType<typeof createTestNamespace>>;

let ns: Ns;
let service: RunningService;
let api: ReturnType<typeof adminClient>;
let nc: NatsConnection;
let jsm: JetStreamManager;
let pool: Pool;
let deps: StateRepublisherDeps;
const codec = JSONCodec();

beforeAll(async () => {
  ns = await createTestNamespace();
  service = await start(serviceEnv(ns, { STATE_STREAM_CHECK_MS: '100' }));
  api = adminClient(service);
  nc = await connect({ servers: ns.env.NATS_URL });
  jsm = await nc.jetstreamManager();
  const url = new URL(ns.databaseUrl);
  url.searchParams.set('options', '-c search_path=campaigns');
  pool = new Pool({ connectionString: url.toString(), max: 4 });
  deps = {
    pool,
    jsm,
    natsPrefix: ns.natsPrefix,
    logger: createLogger('test', 'silent'),
    afterCommit: () => {},
  };
});

afterAll(async () => {
  await pool?.end();
  await nc?.close();
  await service?.stop();
  await ns?.cleanup();
});

const stream = () => streamNames(ns.natsPrefix).state;
const lastSeq = async () => (await jsm.streams.info(stream())).state.last_seq;

/** The latest snapshot the state stream holds on `subject`, or undefined. */
async function held<T>(subject: string): Promise<T | undefined> {
  const msg = await jsm.streams.getMessage(stream(), { last_by_subj: subject }).catch(() => undefined);
  return msg ? (codec.decode(msg.data) as T) : undefined;
}

/** As when NATS comes back without its files and the stream keeper creates the stream again. */
async function loseStateStream(recreate = true): Promise<void> {
  await jsm.streams.delete(stream());
  if (recreate) await ensureStreams(jsm, ns.natsPrefix);
}

async function makeEntities() {
  const p = (await api('POST', '/admin/v1/projects', { name: 'Acme' })).body.id as string;
  const d = (await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web' })).body.id as string;
  const c = (
    await api('POST', `/admin/v1/projects/${p}/campaigns`, {
      name: 'Spring',
      deviceId: d,
      startDate: '2026-05-20T00:00:00.000Z',
      endDate: '2026-06-20T00:00:00.000Z',
      budgetMode: 'metered',
      pricePerConversation: 25,
    })
  ).body.id as string;
  await api('POST', `/admin/v1/projects/${p}/campaigns/${c}/top-offs`, { conversations: 7 });
  const key = (
    await api('POST', `/admin/v1/projects/${p}/api-keys`, { name: 'k', scopes: ['recipients:read'] })
  ).body.id as string;
  await api('DELETE', `/admin/v1/projects/${p}/api-keys/${key}`);
  return { p, d, c, key };
}

it('publishes every campaign, device and API key snapshot again once the state stream was created anew', async () => {
  const { d, c, key } = await makeEntities();
  const subj = subjects(ns.natsPrefix);
  // Published as each change committed; the key's revocation is the last of them.
  await eventually(async () => (await held<ApiKeySnapshot>(subj.apiKeyState(key)))?.revoked);
  const campaign = await held<CampaignSnapshot>(subj.campaignState(c));
  expect(campaign?.includedConversations).toBe(7);

  // The same stream: checked every 100 ms, nothing is published again.
  const seq = await lastSeq();
  await new Promise((r) => setTimeout(r, 500));
  expect(await lastSeq()).toBe(seq);

  await loseStateStream();
  expect(await held(subj.campaignState(c))).toBeUndefined();
  const again = await eventually(() => held<CampaignSnapshot>(subj.campaignState(c)));
  expect(again).toEqual(campaign);
  expect(await eventually(() => held<DeviceSnapshot>(subj.deviceState(d)))).toMatchObject({
    id: d,
    name: 'Web',
  });
  expect(await eventually(() => held<ApiKeySnapshot>(subj.apiKeyState(key)))).toMatchObject({
    id: key,
    revoked: true,
  });
});

it("publishes a deleted campaign's tombstone again, so a replica rebuilt from the new stream learns it is gone", async () => {
  const { p, c } = await makeEntities();
  await api('DELETE', `/admin/v1/projects/${p}/campaigns/${c}`);
  const subj = subjects(ns.natsPrefix);
  const tombstone = await eventually(async () => {
    const s = await held<CampaignSnapshot>(subj.campaignState(c));
    return s?.deletedAt ? s : undefined;
  });
  await loseStateStream();
  expect(await eventually(() => held<CampaignSnapshot>(subj.campaignState(c)))).toEqual(tombstone);
});

it('publishes each snapshot once per new stream however many replicas check', async () => {
  await makeEntities();
  const counts = await pool.query<{ campaigns: number; devices: number; keys: number }>(
    `SELECT (SELECT count(*) FROM campaigns)::int AS campaigns, (SELECT count(*) FROM devices)::int AS devices,
            (SELECT count(*) FROM api_keys)::int AS keys`,
  );
  const { campaigns, devices, keys } = counts.rows[0];
  const mark = (await pool.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM outbox')).rows[0].id;

  await loseStateStream();
  // Two more replicas check at once, besides the running service's own checks.
  await Promise.all([republishForNewStream(deps), republishForNewStream(deps)]);
  await eventually(async () => (await pool.query('SELECT 1 FROM outbox WHERE id > $1', [mark])).rowCount);
  await new Promise((r) => setTimeout(r, 300));
  const enqueued = await pool.query<{ subject: string; n: number }>(
    'SELECT subject, count(*)::int AS n FROM outbox WHERE id > $1 GROUP BY subject',
    [mark],
  );
  expect(enqueued.rows).toHaveLength(campaigns + devices + keys);
  expect(enqueued.rows.every((r) => r.n === 1)).toBe(true);
});

it('leaves a missing stream to the stream keeper', async () => {
  await loseStateStream(false);
  try {
    await expect(republishForNewStream(deps)).resolves.toBe(0);
  } finally {
    await ensureStreams(jsm, ns.natsPrefix);
  }
});

it('publishes a campaign changed while the republish waited for it as it is after the change', async () => {
  const { c } = await makeEntities();
  // A top-off in flight, as changeCampaign makes one: the row locked, the top-off added, the version
  // bumped; the stream is lost meanwhile, so whichever replica republishes waits for the change.
  const change = await pool.connect();
  try {
    await change.query('BEGIN');
    await change.query('SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE', [c]);
    await change.query(
      "INSERT INTO top_offs (id, campaign_id, conversations, price_per_conversation, created_at) VALUES ('top_race', $1, 5, 25, now())",
      [c],
    );
    await change.query('UPDATE campaigns SET version = version + 1 WHERE id = $1', [c]);
    await loseStateStream();
    const republished = republishForNewStream(deps);
    // A republisher (this one, or the service's own) waits for the change to end.
    const waiting = () =>
      pool.query("SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'campaigns.campaigns'::regclass");
    await eventually(async () => (await waiting()).rowCount);
    await change.query('COMMIT');
    await republished;
  } finally {
    change.release();
  }
  const version = (await pool.query('SELECT version FROM campaigns WHERE id = $1', [c])).rows[0].version;
  const last = await pool.query<{ payload: CampaignSnapshot }>(
    'SELECT payload FROM outbox WHERE subject = $1 ORDER BY id DESC LIMIT 1',
    [subjects(ns.natsPrefix).campaignState(c)],
  );
  expect(last.rows[0].payload).toMatchObject({ version, includedConversations: 12 });
});
