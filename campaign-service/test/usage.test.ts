import {
  subjects,
  type UsageAdmitted,
  type UsageAdmittedBatch,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { pruneAppliedRecords, publishJson, type RunningService } from '@outreach/platform';
import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { announceStarts } from '../../test/support/usage-events';
import {
  APPLIED_USAGE_TABLES,
  recordUsageBatch,
  recordUsageStarts,
  type Usage,
  usagesFromEvent,
} from '../src/usage/usage.consumer';
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

describe('recording written batches (UsageStarts)', () => {
  const batch = (batchId: string, campaignId: string, startedAt: readonly string[]): UsageStartsBatch => ({
    batchId,
    recipients: [
      {
        recipientId: 'rcp_s1',
        campaignId,
        projectId: 'prj_u',
        startedAtMs: startedAt.slice(0, 1).map(Date.parse),
      },
      {
        recipientId: 'rcp_s2',
        campaignId,
        projectId: 'prj_u',
        startedAtMs: startedAt.slice(1).map(Date.parse),
      },
    ].filter((r) => r.startedAtMs.length > 0),
  });
  const totals = async (campaignId: string) => {
    const used = await pool.query<{ used: string }>(
      'SELECT used FROM campaign_usage WHERE campaign_id = $1',
      [campaignId],
    );
    const quarters = await pool.query<{ quarter: Date; conversations: string }>(
      'SELECT quarter, conversations FROM campaign_usage_quarters WHERE campaign_id = $1 ORDER BY quarter',
      [campaignId],
    );
    return {
      used: Number(used.rows[0]?.used ?? 0),
      quarters: quarters.rows.map((q) => [q.quarter.toISOString(), Number(q.conversations)]),
    };
  };

  it('adds to the totals and quarter hours exactly as the ledger does for the same conversations', async () => {
    // Quarter boundaries and the milliseconds either side of them, over two days.
    const starts = [
      '2026-05-01T09:59:59.999Z',
      '2026-05-01T10:00:00.000Z',
      '2026-05-01T10:14:59.999Z',
      '2026-05-01T10:15:00.000Z',
      '2026-05-01T10:15:00.001Z',
      '2026-05-01T23:59:59.999Z',
      '2026-05-02T00:00:00.000Z',
      '2026-05-02T00:07:30.500Z',
    ];
    await recordUsageBatch(
      pool,
      starts.map((s, i) => usage(`cnv_q${i}`, 'cmp_ledger', s)),
    );
    expect(
      await recordUsageStarts(pool, [
        batch('usb_q1', 'cmp_starts', starts.slice(0, 3)),
        batch('usb_q2', 'cmp_starts', starts.slice(3)),
      ]),
    ).toBe(starts.length);
    const ledger = await totals('cmp_ledger');
    expect(ledger.used).toBe(starts.length);
    expect(await totals('cmp_starts')).toEqual(ledger);
    // And not through the ledger: no row per conversation.
    expect(await recorded('cmp_starts')).toBe(0);
  });

  it('records each batch once, whichever delivery brings it', async () => {
    const b1 = batch('usb_o1', 'cmp_once', ['2026-05-03T10:00:00.000Z', '2026-05-03T10:20:00.000Z']);
    const b2 = batch('usb_o2', 'cmp_once', ['2026-05-03T10:05:00.000Z']);
    expect(await recordUsageStarts(pool, [b1, b2, b1])).toBe(3);
    expect(await recordUsageStarts(pool, [b2])).toBe(0);
    const b3 = batch('usb_o3', 'cmp_once', ['2026-05-03T10:06:00.000Z']);
    expect(await recordUsageStarts(pool, [b1, b3])).toBe(1);
    expect(await totals('cmp_once')).toEqual({
      used: 4,
      quarters: [
        ['2026-05-03T10:00:00.000Z', 3],
        ['2026-05-03T10:15:00.000Z', 1],
      ],
    });
    expect(await recordUsageStarts(pool, [])).toBe(0);
  });

  it('the consumer records UsageStarts events once per batch and skips malformed ones without blocking', async () => {
    const js = nc.jetstream();
    const subject = subjects(ns.natsPrefix).usageStarts;
    const b1 = batch('usb_c1', 'cmp_cs', ['2026-05-04T10:00:00.000Z', '2026-05-04T10:01:00.000Z']);
    const b2 = batch('usb_c2', 'cmp_cs', ['2026-05-04T10:02:00.000Z']);
    await announceStarts(js, ns.natsPrefix, [b1, b2], 'usb_c_event');
    await js.publish(subject, new TextEncoder().encode('{'));
    await publishJson(js, subject, { eventId: 'usb_c_bad', batches: [{ batchId: 'usb_c_bad' }] });
    // Republished alone after an unconfirmed announcement: recorded already.
    await announceStarts(js, ns.natsPrefix, [b1]);
    const b3 = batch('usb_c3', 'cmp_cs', ['2026-05-04T10:30:00.000Z']);
    await announceStarts(js, ns.natsPrefix, [b3]);
    await eventually(async () => (await totals('cmp_cs')).used >= 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await totals('cmp_cs')).toEqual({
      used: 4,
      quarters: [
        ['2026-05-04T10:00:00.000Z', 3],
        ['2026-05-04T10:30:00.000Z', 1],
      ],
    });
  });

  it('prunes applied batch ids older than the retention, and keeps the rest', async () => {
    await recordUsageStarts(pool, [batch('usb_p_old', 'cmp_p', ['2026-05-05T10:00:00.000Z'])]);
    await recordUsageStarts(pool, [batch('usb_p_new', 'cmp_p', ['2026-05-05T10:01:00.000Z'])]);
    await pool.query(
      "UPDATE applied_usage_batches SET applied_at = now() - interval '40 days' WHERE batch_id = 'usb_p_old'",
    );
    const horizon = new Date(Date.now() - 30 * 86_400_000);
    expect(await pruneAppliedRecords(pool, APPLIED_USAGE_TABLES, horizon)).toBe(1);
    const { rows } = await pool.query(
      "SELECT batch_id FROM applied_usage_batches WHERE batch_id LIKE 'usb_p_%'",
    );
    expect(rows.map((r) => r.batch_id)).toEqual(['usb_p_new']);
    // The totals are the record of what happened: pruning takes nothing from them.
    expect((await totals('cmp_p')).used).toBe(2);
  });
});
