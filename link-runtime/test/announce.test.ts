import { subjects, type UsageAdmittedBatch } from '@outreach/contracts';
import { newId, streamNames } from '@outreach/platform';
import { JSONCodec } from 'nats';
import { eventSized, type UsageBatchEvent } from '../src/admission/admission.service';
import type { OpenLink } from '../src/admission/link-checks';
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
      filterSubjects: subjects(f.ns.natsPrefix).usageAdmittedBatch,
    });
    const msg = await consumer.next({ expires: 5000 });
    if (!msg) throw new Error('no usage event within 5 s');
    const event = JSONCodec<UsageAdmittedBatch>().decode(msg.data);
    expect(event.conversations.map((c) => c.conversationId).sort()).toEqual([...ids].sort());
    // Its own id, not one of the batches', so JetStream cannot take it for one of them republished.
    expect(msg.headers?.get('Nats-Msg-Id')).toBe(event.batchId);
    expect(written.map((r) => r.id)).not.toContain(event.batchId);
    expect(await consumer.next({ expires: 1000 })).toBeNull();

    // Every batch it carried is confirmed, so the outbox forgets all three.
    for (let i = 0; i < 50; i++) {
      const { rowCount } = await f.pool.query('SELECT 1 FROM link.usage_batches');
      if (rowCount === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await f.pool.query('SELECT 1 FROM link.usage_batches')).rowCount).toBe(0);
  });
});

describe('eventSized', () => {
  const batch = (conversations: number): UsageBatchEvent => {
    const id = newId('usb');
    const conversation = {
      conversationId: 'c',
      recipientId: 'r',
      campaignId: 'm',
      projectId: 'p',
      startedAt: '',
    };
    return { id, event: { batchId: id, conversations: Array(conversations).fill(conversation) } };
  };

  it('groups batches in order, no event over 2,000 conversations unless one batch alone is', () => {
    const batches = [batch(800), batch(800), batch(400), batch(1), batch(2500), batch(10)];
    const groups = eventSized(batches);
    expect(groups.map((g) => g.map((b) => b.event.conversations.length))).toEqual([
      [800, 800, 400],
      [1],
      [2500],
      [10],
    ]);
    expect(groups.flat()).toEqual(batches);
    expect(eventSized([])).toEqual([]);
  });
});
