import { subjects, type UsageAdmittedBatch } from '@outreach/contracts';
import { ensureStreams, newId, streamNames } from '@outreach/platform';
import Redis from 'ioredis';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import pino from 'pino';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { Admission, eventSized, type UsageBatchEvent } from '../src/admission/admission.service';
import type { OpenLink } from '../src/admission/link-checks';
import { runMigrations } from '../src/server';
import { activeCampaign, device, recipient } from './support/fixtures';

let ns: TestNamespace;
let pool: Pool;
let redis: Redis;
let nc: NatsConnection;
let admission: Admission;

beforeAll(async () => {
  ns = await createTestNamespace();
  await runMigrations(ns.env);
  pool = new Pool({ connectionString: ns.databaseUrl, max: 5 });
  redis = new Redis(ns.env.REDIS_URL);
  nc = await connect({ servers: ns.env.NATS_URL });
  await ensureStreams(await nc.jetstreamManager(), ns.natsPrefix);
  admission = new Admission({
    redis,
    pool,
    js: nc.jetstream(),
    redisPrefix: ns.redisPrefix,
    natsPrefix: ns.natsPrefix,
    clock: () => new Date(),
    logger: pino({ level: 'silent' }),
    groupCommitMs: 0,
    rebuildGraceMs: 20,
    conversationTtlSeconds: 60,
    // Long enough that writes made one after another fall into one interval even on a slow machine.
    usagePublishMs: 1500,
  });
});

afterAll(async () => {
  await admission?.close();
  await nc?.close();
  await redis?.quit();
  await pool?.end();
  await ns?.cleanup();
});

describe('announcing usage', () => {
  it('announces the batches written within one interval in one event, and confirms each of them', async () => {
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id });
    const link: OpenLink = { ...recipient(campaign), campaign, device: dev };
    // One after another: each start is a durable write (a batch) of its own.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await admission.admit(link)).conversationId);
    const { rows: written } = await pool.query<{ id: string }>('SELECT id FROM link.usage_batches');
    expect(written).toHaveLength(3);

    const js = nc.jetstream();
    const consumer = await js.consumers.get(streamNames(ns.natsPrefix).events, {
      filterSubjects: subjects(ns.natsPrefix).usageAdmittedBatch,
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
      const { rowCount } = await pool.query('SELECT 1 FROM link.usage_batches');
      if (rowCount === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await pool.query('SELECT 1 FROM link.usage_batches')).rowCount).toBe(0);
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
