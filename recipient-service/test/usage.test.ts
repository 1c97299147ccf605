import {
  subjects,
  type UsageAdmitted,
  type UsageAdmittedBatch,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { publishJson } from '@outreach/platform';
import { announceStarts } from '../../test/support/usage-events';
import {
  applyUsageBatch,
  applyUsageStarts,
  pruneAppliedUsage,
  type UsageToApply,
  usagesFromEvent,
} from '../src/usage/usage-consumer';
import { eventually, type Harness, items, startHarness } from './helpers';

let h: Harness;
const P = 'prj_test';
type Rec = Record<string, unknown> & { id: string };

beforeAll(async () => {
  h = await startHarness();
  await h.publishCampaign({ id: 'cmp_batch' });
});
afterAll(async () => {
  await h?.close();
});

async function newRecipients(n: number): Promise<string[]> {
  const res = await h.call<{ results: { recipient: Rec }[] }>('CreateRecipients', {
    projectId: P,
    campaignId: 'cmp_batch',
    itemsJson: items(...Array.from({ length: n }, () => ({}))),
  });
  return res.results.map((r) => r.recipient.id);
}

async function usageOf(id: string): Promise<{ count: number; last: string | null }> {
  const got = await h.call<Rec>('GetRecipient', { projectId: P, recipientId: id });
  return { count: Number(got.interactionCount), last: (got.lastInteractionAt as string | undefined) ?? null };
}

const usage = (conversationId: string, recipientId: string, startedAt: string | null): UsageToApply => ({
  conversationId,
  recipientId,
  startedAt,
});

describe('applying a batch of usage', () => {
  it('counts a conversation id repeated within one batch once, per recipient, with the latest start', async () => {
    const [a, b] = await newRecipients(2);
    const applied = await applyUsageBatch(h.pool, [
      usage('cnv_in_1', a, '2026-02-01T10:00:00.000Z'),
      usage('cnv_in_2', a, '2026-02-01T12:00:00.000Z'),
      usage('cnv_in_1', a, '2026-02-01T10:00:00.000Z'),
      usage('cnv_in_3', a, '2026-02-01T11:00:00.000Z'),
      usage('cnv_in_4', b, '2026-02-02T09:00:00.000Z'),
      usage('cnv_in_4', b, '2026-02-02T09:00:00.000Z'),
    ]);
    expect(applied).toBe(4);
    expect(await usageOf(a)).toEqual({ count: 3, last: '2026-02-01T12:00:00.000Z' });
    expect(await usageOf(b)).toEqual({ count: 1, last: '2026-02-02T09:00:00.000Z' });
  });

  it('counts a conversation id already applied by an earlier batch not again', async () => {
    const [a] = await newRecipients(1);
    expect(await applyUsageBatch(h.pool, [usage('cnv_x_1', a, '2026-03-01T10:00:00.000Z')])).toBe(1);
    const applied = await applyUsageBatch(h.pool, [
      usage('cnv_x_1', a, '2026-03-05T10:00:00.000Z'),
      usage('cnv_x_2', a, '2026-03-02T10:00:00.000Z'),
    ]);
    expect(applied).toBe(1);
    // The repeated id neither counts nor moves the last interaction to its (different) start.
    expect(await usageOf(a)).toEqual({ count: 2, last: '2026-03-02T10:00:00.000Z' });
    expect(await applyUsageBatch(h.pool, [usage('cnv_x_1', a, null), usage('cnv_x_2', a, null)])).toBe(0);
    expect(await usageOf(a)).toEqual({ count: 2, last: '2026-03-02T10:00:00.000Z' });
  });

  it('keeps the later last interaction when a batch brings only older starts', async () => {
    const [a] = await newRecipients(1);
    await applyUsageBatch(h.pool, [usage('cnv_old_1', a, '2026-04-10T10:00:00.000Z')]);
    await applyUsageBatch(h.pool, [
      usage('cnv_old_2', a, '2026-04-01T10:00:00.000Z'),
      usage('cnv_old_3', a, null),
    ]);
    expect(await usageOf(a)).toEqual({ count: 3, last: '2026-04-10T10:00:00.000Z' });
  });

  it('records the conversations of a deleted (or unknown) recipient as seen without failing the batch', async () => {
    const [a] = await newRecipients(1);
    const applied = await applyUsageBatch(h.pool, [
      usage('cnv_gone_1', 'rcp_does_not_exist', '2026-05-01T10:00:00.000Z'),
      usage('cnv_gone_2', a, '2026-05-01T10:00:00.000Z'),
    ]);
    expect(applied).toBe(2);
    expect(await usageOf(a)).toEqual({ count: 1, last: '2026-05-01T10:00:00.000Z' });
  });
});

describe('pruning applied usage', () => {
  it('forgets applied conversation ids recorded before the horizon, a page at a time, and keeps the rest', async () => {
    const [a] = await newRecipients(1);
    const ids = Array.from({ length: 25 }, (_, i) => `cnv_prune_${i}`);
    expect(
      await applyUsageBatch(
        h.pool,
        ids.map((id) => usage(id, a, null)),
      ),
    ).toBe(25);
    // The first twenty were applied forty days ago.
    await h.pool.query(
      `UPDATE recipients.applied_usage SET applied_at = now() - interval '40 days' WHERE conversation_id = ANY($1)`,
      [ids.slice(0, 20)],
    );
    const horizon = new Date(Date.now() - 30 * 86_400_000);
    expect(await pruneAppliedUsage(h.pool, horizon, 7)).toBe(20);
    const { rows } = await h.pool.query<{ conversation_id: string }>(
      'SELECT conversation_id FROM recipients.applied_usage WHERE conversation_id = ANY($1) ORDER BY 1',
      [ids],
    );
    expect(rows.map((r) => r.conversation_id)).toEqual(ids.slice(20).sort());
    // The recipient's count is the record of what happened: pruning takes nothing from it.
    expect((await usageOf(a)).count).toBe(25);
    // A recent id still counts once when its event comes again.
    expect(await applyUsageBatch(h.pool, [usage(ids[24], a, null)])).toBe(0);
    expect(await pruneAppliedUsage(h.pool, horizon)).toBe(0);
  });
});

describe('reading usage events', () => {
  it('accepts a missing start and refuses what would fail a whole batch', () => {
    const base = { conversationId: 'cnv_1', recipientId: 'rcp_1', campaignId: 'c', projectId: 'p' };
    expect(usagesFromEvent({ ...base, startedAt: '2026-01-01T10:00:00Z' })).toEqual([
      usage('cnv_1', 'rcp_1', '2026-01-01T10:00:00.000Z'),
    ]);
    expect(usagesFromEvent(base)).toEqual([usage('cnv_1', 'rcp_1', null)]);
    expect(usagesFromEvent({ ...base, startedAt: 'yesterday' })).toBeUndefined();
    expect(usagesFromEvent({ ...base, startedAt: 12 })).toBeUndefined();
    expect(usagesFromEvent({ ...base, conversationId: 'cnv\0' })).toBeUndefined();
    expect(usagesFromEvent({ ...base, recipientId: undefined })).toBeUndefined();
    expect(usagesFromEvent(null)).toBeUndefined();
  });

  it('reads every conversation of a batch and skips only the ones it cannot apply', () => {
    const one = { conversationId: 'cnv_1', recipientId: 'rcp_1', campaignId: 'c', projectId: 'p' };
    const batch = {
      batchId: 'usb_1',
      conversations: [
        { ...one, startedAt: '2026-01-01T10:00:00Z' },
        { ...one, conversationId: 'cnv_2', recipientId: undefined },
        { ...one, conversationId: 'cnv_3', startedAt: '2026-01-01T11:00:00Z' },
      ],
    };
    expect(usagesFromEvent(batch)).toEqual([
      usage('cnv_1', 'rcp_1', '2026-01-01T10:00:00.000Z'),
      usage('cnv_3', 'rcp_1', '2026-01-01T11:00:00.000Z'),
    ]);
    expect(usagesFromEvent({ batchId: 'usb_2', conversations: [{}] })).toBeUndefined();
  });
});

describe('the usage consumer', () => {
  it('counts each conversation once across batches and skips malformed events without blocking', async () => {
    const [a] = await newRecipients(1);
    const js = h.nc.jetstream();
    const subject = subjects(h.ns.natsPrefix).usageAdmitted;
    const send = (conversationId: string, startedAt: string) =>
      publishJson(js, subject, {
        conversationId,
        recipientId: a,
        campaignId: 'cmp_batch',
        projectId: P,
        startedAt,
      } satisfies UsageAdmitted);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(`cnv_nats_${i % 20}`, `2026-06-01T10:00:${String(i % 20).padStart(2, '0')}.000Z`),
      ),
    );
    await js.publish(subject, new TextEncoder().encode('not json'));
    await publishJson(js, subject, { conversationId: 'cnv_bad', recipientId: a, startedAt: 'not a date' });
    await eventually(async () => (await usageOf(a)).count === 20);
    // Redeliveries of conversations applied by earlier batches, plus one new.
    for (let i = 0; i < 20; i += 5) await send(`cnv_nats_${i}`, '2026-06-09T10:00:00.000Z');
    await send('cnv_nats_last', '2026-06-02T10:00:00.000Z');
    await eventually(async () => (await usageOf(a)).count >= 21);
    // A batch (as link runtimes publish) repeating two applied conversations and adding two.
    const conversation = (conversationId: string, startedAt: string): UsageAdmitted => ({
      conversationId,
      recipientId: a,
      campaignId: 'cmp_batch',
      projectId: P,
      startedAt,
    });
    await publishJson(js, subjects(h.ns.natsPrefix).usageAdmittedBatch, {
      batchId: 'usb_nats',
      conversations: [
        conversation('cnv_nats_3', '2026-06-09T10:00:00.000Z'),
        conversation('cnv_nats_last', '2026-06-09T10:00:00.000Z'),
        conversation('cnv_nats_b1', '2026-06-03T10:00:00.000Z'),
        conversation('cnv_nats_b2', '2026-06-04T10:00:00.000Z'),
      ],
    } satisfies UsageAdmittedBatch);
    await eventually(async () => (await usageOf(a)).count >= 23);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await usageOf(a)).toEqual({ count: 23, last: '2026-06-04T10:00:00.000Z' });
  });
});

describe('applying written batches (UsageStarts)', () => {
  const batch = (batchId: string, ...recipients: [string, ...string[]][]): UsageStartsBatch => ({
    batchId,
    recipients: recipients.map(([recipientId, ...starts]) => ({
      recipientId,
      campaignId: 'cmp_batch',
      projectId: P,
      startedAtMs: starts.map((s) => Date.parse(s)),
    })),
  });

  it('applies each batch once, whichever delivery brings it, with each recipient latest start', async () => {
    const [a, b] = await newRecipients(2);
    const b1 = batch(
      'usb_s1',
      [a, '2026-03-01T10:00:00.000Z', '2026-03-01T12:00:00.000Z'],
      [b, '2026-03-01T09:00:00.000Z'],
    );
    const b2 = batch('usb_s2', [a, '2026-03-01T11:00:00.000Z']);
    // Announced together, and b1 also republished alone in the same delivery.
    expect(await applyUsageStarts(h.pool, [b1, b2, b1])).toBe(4);
    expect(await usageOf(a)).toEqual({ count: 3, last: '2026-03-01T12:00:00.000Z' });
    expect(await usageOf(b)).toEqual({ count: 1, last: '2026-03-01T09:00:00.000Z' });
    // Delivered again with a new one: only the new one counts, and an older start moves nothing back.
    const b3 = batch('usb_s3', [a, '2026-02-01T08:00:00.000Z']);
    expect(await applyUsageStarts(h.pool, [b2, b3])).toBe(1);
    expect(await usageOf(a)).toEqual({ count: 4, last: '2026-03-01T12:00:00.000Z' });
    expect(await applyUsageStarts(h.pool, [b1, b2, b3])).toBe(0);
    expect(await applyUsageStarts(h.pool, [])).toBe(0);
    // One row per batch, none per conversation.
    const { rows } = await h.pool.query(
      "SELECT batch_id FROM recipients.applied_usage_batches WHERE batch_id LIKE 'usb_s%' ORDER BY 1",
    );
    expect(rows.map((r) => r.batch_id)).toEqual(['usb_s1', 'usb_s2', 'usb_s3']);
  });

  it("keeps each recipient's usage on its own page: bulk-created rows leave room for in-place updates", async () => {
    const created = await newRecipients(200);
    // Recipients of a batch are customers opening their links: a few, scattered over the table.
    const used = created.filter((_, i) => i % 20 === 7);
    const pageOf = async () => {
      const { rows } = await h.pool.query<{ id: string; page: string }>(
        'SELECT id, (ctid::text::point)[0] AS page FROM recipients.recipients WHERE id = ANY($1)',
        [used],
      );
      return new Map(rows.map((r) => [r.id, r.page]));
    };
    const before = await pageOf();
    const starts = used.map((id): [string, string] => [id, '2026-04-01T10:00:00.000Z']);
    expect(await applyUsageStarts(h.pool, [batch('usb_pages', ...starts)])).toBe(used.length);
    // An update that stays on its page needs no new entry in any of the table's indexes.
    expect(await pageOf()).toEqual(before);
    expect((await usageOf(used[0])).count).toBe(1);
  });

  it('records the batch of a deleted (or unknown) recipient as applied without failing the others', async () => {
    const [a] = await newRecipients(1);
    const mixed = batch(
      'usb_s_gone',
      ['rcp_gone', '2026-03-02T10:00:00.000Z'],
      [a, '2026-03-02T10:00:00.000Z'],
    );
    expect(await applyUsageStarts(h.pool, [mixed])).toBe(2);
    expect(await usageOf(a)).toEqual({ count: 1, last: '2026-03-02T10:00:00.000Z' });
    expect(await applyUsageStarts(h.pool, [mixed])).toBe(0);
  });

  it('prunes applied batch ids with the conversation ids', async () => {
    const [a] = await newRecipients(1);
    await applyUsageStarts(h.pool, [batch('usb_s_old', [a, '2026-03-03T10:00:00.000Z'])]);
    await applyUsageStarts(h.pool, [batch('usb_s_new', [a, '2026-03-03T11:00:00.000Z'])]);
    await h.pool.query(
      "UPDATE recipients.applied_usage_batches SET applied_at = now() - interval '40 days' WHERE batch_id = 'usb_s_old'",
    );
    expect(await pruneAppliedUsage(h.pool, new Date(Date.now() - 30 * 86_400_000))).toBeGreaterThanOrEqual(1);
    const { rows } = await h.pool.query(
      "SELECT batch_id FROM recipients.applied_usage_batches WHERE batch_id LIKE 'usb_s_%' ORDER BY 1",
    );
    expect(rows.map((r) => r.batch_id)).not.toContain('usb_s_old');
    expect(rows.map((r) => r.batch_id)).toContain('usb_s_new');
  });

  it('the consumer applies UsageStarts events once per batch and skips malformed ones without blocking', async () => {
    const [a] = await newRecipients(1);
    const js = h.nc.jetstream();
    const subject = subjects(h.ns.natsPrefix).usageStarts;
    const b1 = batch('usb_n1', [a, '2026-07-01T10:00:00.000Z', '2026-07-01T10:01:00.000Z']);
    const b2 = batch('usb_n2', [a, '2026-07-01T10:02:00.000Z']);
    await announceStarts(js, h.ns.natsPrefix, [b1, b2], 'usb_n_event');
    await js.publish(subject, new TextEncoder().encode('not json'));
    await publishJson(js, subject, {
      eventId: 'usb_n_bad',
      batches: [{ batchId: 'usb_n_bad', recipients: [{}] }],
    });
    // The announcement was not confirmed, so the link runtime republishes each batch alone.
    await announceStarts(js, h.ns.natsPrefix, [b1]);
    await announceStarts(js, h.ns.natsPrefix, [b2]);
    const b3 = batch('usb_n3', [a, '2026-07-01T09:00:00.000Z']);
    await announceStarts(js, h.ns.natsPrefix, [b3]);
    await eventually(async () => (await usageOf(a)).count >= 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await usageOf(a)).toEqual({ count: 4, last: '2026-07-01T10:02:00.000Z' });
  });
});
