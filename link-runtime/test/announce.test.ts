import { subjects, type UsageStarts } from '@outreach/contracts';
import { newId, streamNames } from '@outreach/platform';
import { JSONCodec } from 'nats';
import type { OpenLink } from '../src/admission/link-checks';
import { eventSized, type UsageBatchEvent } from '../src/admission/usage-announcer';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign, device, recipient } from './support/fixtures';

let f: AdmissionFixture;

// Long enough that writes made one after another fall into one interval even on a slow machine.
beforeAll(async () => {
  f = await startAdmission({ usagePublishMs: 1500 });
});

afterAll(() => f?.close());

describe('announcing usage', () => {
  it('announces the batches written within one interval in one event, and confirms each of them', async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id });
    const link: OpenLink = { ...recipient(campaign), campaign, device: dev };
    // One after another: each start is a durable write (a batch) of its own.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await f.admission.admit(link)).conversationId);
    const { rows: written } = await f.pool.query<{ id: string }>('SELECT id FROM link.usage_batches');
    expect(written).toHaveLength(3);

    const js = f.nc.jetstream();
    const consumer = await js.consumers.get(streamNames(f.ns.natsPrefix).events, {
      filterSubjects: subjects(f.ns.natsPrefix).usageStarts,
    });
    const msg = await consumer.next({ expires: 5000 });
    if (!msg) throw new Error('no usage event within 5 s');
    const event = JSONCodec<UsageStarts>().decode(msg.data);
    // Each written batch in it, as written: its id and its one recipient's start.
    expect(event.batches.map((b) => b.batchId).sort()).toEqual(written.map((r) => r.id).sort());
    for (const b of event.batches)
      expect(b.recipients).toEqual([
        {
          recipientId: link.recipient.id,
          campaignId: campaign.id,
          projectId: campaign.projectId,
          startedAtMs: [expect.any(Number)],
        },
      ]);
    const { rows: recorded } = await f.pool.query<{ ms: string }>(
      'SELECT (extract(epoch FROM started_at) * 1000)::bigint AS ms FROM link.conversations WHERE id = ANY($1)',
      [ids],
    );
    expect(event.batches.flatMap((b) => b.recipients[0].startedAtMs).sort()).toEqual(
      recorded.map((r) => Number(r.ms)).sort(),
    );
    // Its own id, not one of the batches', so JetStream cannot take it for one of them republished.
    expect(msg.headers?.get('Nats-Msg-Id')).toBe(event.eventId);
    expect(written.map((r) => r.id)).not.toContain(event.eventId);
    expect(await consumer.next({ expires: 1000 })).toBeNull();

    // Every batch it carried is confirmed, so the outbox marks all three (and keeps them for a replay).
    const unconfirmed = 'SELECT 1 FROM link.usage_batches WHERE confirmed_at IS NULL';
    for (let i = 0; i < 50; i++) {
      const { rowCount } = await f.pool.query(unconfirmed);
      if (rowCount === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await f.pool.query(unconfirmed)).rowCount).toBe(0);
    expect((await f.pool.query('SELECT 1 FROM link.usage_batches')).rowCount).toBe(3);
  });
});

describe('eventSized', () => {
  const batch = (conversations: number): UsageBatchEvent => {
    const id = newId('usb');
    // Spread over recipients as a real batch is: the size is the starts, whoever started them.
    const recipients = [conversations - Math.floor(conversations / 2), Math.floor(conversations / 2)]
      .filter((n) => n > 0)
      .map((n, i) => ({
        recipientId: `r${i}`,
        campaignId: 'm',
        projectId: 'p',
        startedAtMs: Array(n).fill(0),
      }));
    return { id, batch: { batchId: id, recipients } };
  };
  const size = (b: UsageBatchEvent) => b.batch.recipients.reduce((n, r) => n + r.startedAtMs.length, 0);

  it('groups batches in order, no event over 2,000 conversations unless one batch alone is', () => {
    const batches = [batch(800), batch(800), batch(400), batch(1), batch(2500), batch(10)];
    const groups = eventSized(batches);
    expect(groups.map((g) => g.map(size))).toEqual([[800, 800, 400], [1], [2500], [10]]);
    expect(groups.flat()).toEqual(batches);
    expect(eventSized([])).toEqual([]);
  });
});
