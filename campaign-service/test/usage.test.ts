import { subjects, type UsageAdmitted, type UsageAdmittedBatch } from '@outreach/contracts';
import { publishJson, type RunningService } from '@outreach/platform';
import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { recordUsageBatch, type Usage, usagesFromEvent } from '../src/usage/usage.consumer';
import { createTestNamespace, eventually, serviceEnv, start } from './helpers';

let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let service: RunningService;
let pool: Pool;
let nc: NatsConnection;

beforeAll(async () => {
  ns = await createTestNamespace();
  service = await start(serviceEnv(ns));
  const url = new URL(ns.databaseUrl);
  url.searchParams.set('options', '-c search_path=campaigns');
  pool = new Pool({ connectionString: url.toString(), max: 2 });
  nc = await connect({ servers: ns.env.NATS_URL });
});
afterAll(async () => {
  await nc?.close();
  await pool?.end();
  await service?.stop();
  await ns?.cleanup();
});

const usage = (
  conversationId: string,
  campaignId: string,
  startedAt = '2026-05-01T10:00:00.000Z',
): Usage => ({
  conversationId,
  campaignId,
  projectId: 'prj_u',
  recipientId: 'rcp_u',
  startedAt: new Date(startedAt),
});
const recorded = async (campaignId: string) =>
  (
    await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM conversations WHERE campaign_id = $1', [
      campaignId,
    ])
  ).rows[0].n;

describe('recording a batch of usage', () => {
  it('records a conversation id repeated within one batch once', async () => {
    const n = await recordUsageBatch(pool, [
      usage('cnv_a1', 'cmp_a'),
      usage('cnv_a2', 'cmp_a'),
      usage('cnv_a1', 'cmp_a'),
      usage('cnv_a3', 'cmp_a'),
      usage('cnv_a2', 'cmp_a'),
    ]);
    expect(n).toBe(3);
    expect(await recorded('cmp_a')).toBe(3);
  });

  it('records a conversation id from an earlier batch not again, and keeps its first record', async () => {
    expect(await recordUsageBatch(pool, [usage('cnv_b1', 'cmp_b', '2026-05-01T10:00:00.000Z')])).toBe(1);
    const n = await recordUsageBatch(pool, [
      usage('cnv_b1', 'cmp_b', '2026-05-09T10:00:00.000Z'),
      usage('cnv_b2', 'cmp_b'),
    ]);
    expect(n).toBe(1);
    expect(await recorded('cmp_b')).toBe(2);
    const { rows } = await pool.query(
      "SELECT started_at FROM conversations WHERE conversation_id = 'cnv_b1'",
    );
    expect(rows[0].started_at.toISOString()).toBe('2026-05-01T10:00:00.000Z');
    expect(await recordUsageBatch(pool, [])).toBe(0);
  });
});

describe('reading usage events', () => {
  it('refuses what would fail a whole batch', () => {
    const base = { conversationId: 'cnv_1', recipientId: 'rcp_1', campaignId: 'c', projectId: 'p' };
    expect(usagesFromEvent({ ...base, startedAt: '2026-01-01T10:00:00Z' })).toEqual([
      { ...base, startedAt: new Date('2026-01-01T10:00:00.000Z') },
    ]);
    expect(usagesFromEvent(base)).toBeUndefined();
    expect(usagesFromEvent({ ...base, startedAt: 'soon' })).toBeUndefined();
    expect(
      usagesFromEvent({ ...base, projectId: undefined, startedAt: '2026-01-01T10:00:00Z' }),
    ).toBeUndefined();
    expect(
      usagesFromEvent({ ...base, recipientId: 'r\0', startedAt: '2026-01-01T10:00:00Z' }),
    ).toBeUndefined();
    expect(usagesFromEvent(undefined)).toBeUndefined();
  });

  it('reads every conversation of a batch and drops only the ones it cannot record', () => {
    const one = { conversationId: 'cnv_1', recipientId: 'rcp_1', campaignId: 'c', projectId: 'p' };
    const batch = {
      batchId: 'usb_1',
      conversations: [
        { ...one, startedAt: '2026-01-01T10:00:00Z' },
        { ...one, conversationId: 'cnv_2', startedAt: 'soon' },
        { ...one, conversationId: 'cnv_3', startedAt: '2026-01-01T11:00:00Z' },
      ],
    };
    expect(usagesFromEvent(batch)?.map((u) => [u.conversationId, u.startedAt.toISOString()])).toEqual([
      ['cnv_1', '2026-01-01T10:00:00.000Z'],
      ['cnv_3', '2026-01-01T11:00:00.000Z'],
    ]);
    expect(usagesFromEvent({ batchId: 'usb_2', conversations: [] })).toBeUndefined();
  });
});

describe('the usage consumer', () => {
  it('records each conversation once across batches and drops malformed events without blocking', async () => {
    const js = nc.jetstream();
    const subject = subjects(ns.natsPrefix).usageAdmitted;
    const send = (conversationId: string) =>
      publishJson(js, subject, {
        conversationId,
        recipientId: 'rcp_c',
        campaignId: 'cmp_c',
        projectId: 'prj_c',
        startedAt: '2026-05-02T10:00:00.000Z',
      } satisfies UsageAdmitted);
    await Promise.all(Array.from({ length: 60 }, (_, i) => send(`cnv_c${i % 25}`)));
    await js.publish(subject, new TextEncoder().encode('{'));
    await publishJson(js, subject, { conversationId: 'cnv_c_bad', campaignId: 'cmp_c' });
    await eventually(async () => (await recorded('cmp_c')) === 25);
    for (let i = 0; i < 25; i += 4) await send(`cnv_c${i}`);
    await send('cnv_c_last');
    await eventually(async () => (await recorded('cmp_c')) >= 26);
    // A batch (as link runtimes publish) repeating two recorded conversations and adding two.
    const conversation = (conversationId: string): UsageAdmitted => ({
      conversationId,
      recipientId: 'rcp_c',
      campaignId: 'cmp_c',
      projectId: 'prj_c',
      startedAt: '2026-05-03T10:00:00.000Z',
    });
    await publishJson(js, subjects(ns.natsPrefix).usageAdmittedBatch, {
      batchId: 'usb_c',
      conversations: ['cnv_c1', 'cnv_c_last', 'cnv_c_b1', 'cnv_c_b2'].map(conversation),
    } satisfies UsageAdmittedBatch);
    await eventually(async () => (await recorded('cmp_c')) >= 28);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await recorded('cmp_c')).toBe(28);
  });
});
