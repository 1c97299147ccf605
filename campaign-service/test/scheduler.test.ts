import type { CampaignLifecycleEvent } from '@outreach/contracts';
import { type RunningService, streamNames } from '@outreach/platform';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { Client } from 'pg';
import { adminClient, createTestNamespace, eventually, manualClock, serviceEnv, start } from './helpers';

type Ns = Awaited<ReturnType<typeof createTestNamespace>>;

let ns: Ns;
let a: RunningService;
let b: RunningService;
let nc: NatsConnection;
let db: Client;
const clock = manualClock('2026-05-10T12:00:00.000Z');
const codec = JSONCodec();

beforeAll(async () => {
  ns = await createTestNamespace();
  // Two instances on one database and one NATS prefix, both running the scheduler.
  a = await start(serviceEnv(ns), { clock: clock.now });
  b = await start(serviceEnv(ns), { clock: clock.now });
  nc = await connect({ servers: ns.env.NATS_URL });
  db = new Client({ connectionString: ns.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await nc?.close();
  await a?.stop();
  await b?.stop();
  await ns?.cleanup();
});

/** Every lifecycle event in the EVENTS stream, in order. */
async function lifecycleEvents(): Promise<CampaignLifecycleEvent[]> {
  const jsm = await nc.jetstreamManager();
  const stream = streamNames(ns.natsPrefix).events;
  const info = await jsm.streams.info(stream);
  const out: CampaignLifecycleEvent[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
    if (m?.subject.endsWith('.events.campaign.lifecycle'))
      out.push(codec.decode(m.data) as CampaignLifecycleEvent);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('publishes started and ended once per campaign across two instances and a restart', async () => {
  const api = adminClient(a);
  const p = (await api('POST', '/admin/v1/projects', { name: 'Sched' })).body.id;
  const d = (await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web' })).body.id;
  const mk = async (start: string, end: string) =>
    (
      await api('POST', `/admin/v1/projects/${p}/campaigns`, {
        name: 'c',
        deviceId: d,
        startDate: start,
        endDate: end,
        budgetMode: 'metered',
      })
    ).body.id as string;
  const runs = await mk('2026-05-11T00:00:00.000Z', '2026-05-12T00:00:00.000Z');
  const halted = await mk('2026-05-11T00:00:00.000Z', '2026-05-20T00:00:00.000Z');
  const draft = await mk('2026-05-11T00:00:00.000Z', '2026-05-12T00:00:00.000Z');
  expect((await api('POST', `/admin/v1/projects/${p}/campaigns/${runs}/launch`)).status).toBe(200);
  expect((await api('POST', `/admin/v1/projects/${p}/campaigns/${halted}/launch`)).status).toBe(200);
  // Halted while upcoming: it never starts, it only ends.
  expect((await api('POST', `/admin/v1/projects/${p}/campaigns/${halted}/halt`)).status).toBe(200);

  // Published by a scheduler tick, which a loaded machine may run later than 400 ms from now.
  await eventually(async () => (await lifecycleEvents()).length >= 1);
  await sleep(400); // several ticks of both instances
  let events = await lifecycleEvents();
  expect(events.map((e) => [e.campaignId, e.transition])).toEqual([[halted, 'ended']]);

  clock.set('2026-05-11T00:00:00.000Z');
  await eventually(async () => (await lifecycleEvents()).length === 2);
  await sleep(500); // several ticks of both instances
  events = await lifecycleEvents();
  expect(events).toEqual([
    { campaignId: halted, projectId: p, transition: 'ended', at: '2026-05-10T12:00:00.000Z' },
    { campaignId: runs, projectId: p, transition: 'started', at: '2026-05-11T00:00:00.000Z' },
  ]);

  // Restart one instance; nothing is republished, and the end is published once.
  await b.stop();
  b = await start(serviceEnv(ns), { clock: clock.now });
  await sleep(400);
  expect(await lifecycleEvents()).toHaveLength(2);
  clock.set('2026-05-12T00:00:01.000Z');
  await eventually(async () => (await lifecycleEvents()).length === 3);
  await sleep(500);
  events = await lifecycleEvents();
  expect(events.slice(2)).toEqual([
    { campaignId: runs, projectId: p, transition: 'ended', at: '2026-05-12T00:00:00.000Z' },
  ]);
  expect(events.some((e) => e.campaignId === draft)).toBe(false);
  const notices = await db.query(
    'SELECT campaign_id, transition, sent_at IS NOT NULL AS sent FROM campaigns.lifecycle_notices ORDER BY at',
  );
  expect(notices.rows).toHaveLength(3);
  expect(notices.rows.every((r) => r.sent)).toBe(true);
});

it('republishes a notice that was claimed but never sent (publisher crashed)', async () => {
  const api = adminClient(a);
  const p = (await api('POST', '/admin/v1/projects', { name: 'Crash' })).body.id;
  const d = (await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web' })).body.id;
  clock.set('2026-06-01T00:00:00.000Z');
  const id = (
    await api('POST', `/admin/v1/projects/${p}/campaigns`, {
      name: 'c',
      deviceId: d,
      startDate: '2026-06-02T00:00:00.000Z',
      endDate: '2026-06-03T00:00:00.000Z',
      budgetMode: 'metered',
    })
  ).body.id;
  await api('POST', `/admin/v1/projects/${p}/campaigns/${id}/launch`);
  // A claim left behind by an instance that died before publishing.
  await db.query(
    `INSERT INTO campaigns.lifecycle_notices (campaign_id, project_id, transition, at, claimed_at)
     VALUES ($1, $2, 'started', '2026-06-02T00:00:00.000Z', '2026-06-01T00:00:00.000Z')`,
    [id, p],
  );
  const before = (await lifecycleEvents()).length;
  clock.set('2026-06-02T00:00:10.000Z');
  await eventually(async () => (await lifecycleEvents()).length === before + 1);
  await sleep(400);
  const events = await lifecycleEvents();
  expect(events.slice(before)).toEqual([
    { campaignId: id, projectId: p, transition: 'started', at: '2026-06-02T00:00:00.000Z' },
  ]);
});
