import { Writable } from 'node:stream';
import { subjects, type UsageStarts } from '@outreach/contracts';
import { ensureStreams, recordStreamCreation, streamNames, withTransaction } from '@outreach/platform';
import { type JetStreamManager, JSONCodec } from 'nats';
import pino from 'pino';
import {
  markReplayDue,
  pruneConfirmedBatches,
  replayDue,
  unconfirmForReplay,
} from '../src/admission/conversations.repository';
import type { OpenLink } from '../src/admission/link-checks';
import { type AdmissionFixture, startAdmission } from './support/admission';
import { activeCampaign, device, recipient } from './support/fixtures';
import { waitFor } from './support/harness';

let f: AdmissionFixture;
let jsm: JetStreamManager;

beforeEach(async () => {
  f = await startAdmission();
  jsm = await f.nc.jetstreamManager();
});

afterEach(() => f?.close());

const events = () => streamNames(f.ns.natsPrefix).events;
const unconfirmed = async () =>
  (await f.pool.query('SELECT 1 FROM link.usage_batches WHERE confirmed_at IS NULL')).rowCount;

/**
 * The ids of the batches the UsageStarts events in the events stream carry, each once: under
 * load a sweep may publish a batch again before its first event's confirmation arrives, which
 * the consumers apply once.
 */
async function announcedBatches(): Promise<string[]> {
  const consumer = await f.nc.jetstream().consumers.get(events(), {
    filterSubjects: subjects(f.ns.natsPrefix).usageStarts,
  });
  const ids: string[] = [];
  for (let msg = await consumer.next({ expires: 1000 }); msg; msg = await consumer.next({ expires: 1000 }))
    ids.push(
      ...JSONCodec<UsageStarts>()
        .decode(msg.data)
        .batches.map((b) => b.batchId),
    );
  return [...new Set(ids)].sort();
}

/** Records the events stream as it is and marks a replay due now, as on finding it new; the mark. */
async function markDue(stream: string): Promise<Date> {
  const { created } = await jsm.streams.info(stream);
  const mark = new Date();
  await withTransaction(f.pool, async (client) => {
    await recordStreamCreation(client, 'link.stream_epochs', stream, created);
    await markReplayDue(client, stream, mark);
  });
  return mark;
}

async function admitSome(n: number): Promise<string[]> {
  const dev = device();
  const campaign = activeCampaign({ deviceId: dev.id });
  const link: OpenLink = { ...recipient(campaign), campaign, device: dev };
  for (let i = 0; i < n; i++) await f.admission.admit(link);
  await waitFor(async () => (await unconfirmed()) === 0);
  const { rows } = await f.pool.query<{ id: string }>('SELECT id FROM link.usage_batches ORDER BY id');
  return rows.map((r) => r.id);
}

it('publishes every kept batch again once the events stream was created anew, and only then', async () => {
  f.admission.startSweeper(100);
  const kept = await admitSome(3);
  expect(kept).toHaveLength(3);
  expect(await announcedBatches()).toEqual(kept);

  // The same stream: sweeps go on every 100 ms, and publish nothing again. (On a loaded machine a
  // sweep may have republished a batch whose confirmation took longer than 100 ms: counted from
  // once a quarter second has passed without a new message.)
  const lastSeq = async () => (await jsm.streams.info(events())).state.last_seq;
  let seq = await lastSeq();
  for (let settled = false; !settled; ) {
    await new Promise((r) => setTimeout(r, 250));
    const next = await lastSeq();
    settled = next === seq;
    seq = next;
  }
  await new Promise((r) => setTimeout(r, 400));
  expect(await lastSeq()).toBe(seq);

  // As when NATS comes back without its files and a stream keeper creates the stream again.
  await jsm.streams.delete(events());
  await ensureStreams(jsm, f.ns.natsPrefix);
  await waitFor(async () => (await jsm.streams.info(events())).state.messages >= 3, 5000);
  expect(await announcedBatches()).toEqual(kept);
  await waitFor(async () => (await unconfirmed()) === 0);
});

it('does not replay on the first check of a stream, which only records it', async () => {
  await admitSome(2);
  // Confirmed before any sweep ran, as by the version before the record of streams.
  const confirmedAt = 'SELECT id, confirmed_at FROM link.usage_batches ORDER BY id';
  const before = (await f.pool.query(confirmedAt)).rows;
  f.admission.startSweeper(100);
  await waitFor(async () => (await f.pool.query('SELECT 1 FROM link.stream_epochs')).rowCount === 1);
  await new Promise((r) => setTimeout(r, 300));
  // A replay would have marked them unconfirmed and confirmed them again, later.
  expect((await f.pool.query(confirmedAt)).rows).toEqual(before);
  expect(before).toHaveLength(2);
});

it('drains a backlog of unconfirmed batches in one sweep, page after page', async () => {
  await f.pool.query(
    `INSERT INTO link.usage_batches (id, event, created_at)
     SELECT 'usb_backlog_' || i, format('{"batchId":"usb_backlog_%s","recipients":[]}', i), now() - interval '1 minute'
       FROM generate_series(1, 450) AS i`,
  );
  // One sweep only: the next would come in a minute.
  f.admission.startSweeper(60_000);
  await waitFor(async () => (await unconfirmed()) === 0, 10_000);
});

it('leaves the backlog to the one replica already draining it', async () => {
  await f.pool.query(
    `INSERT INTO link.usage_batches (id, event, created_at)
     SELECT 'usb_other_' || i, format('{"batchId":"usb_other_%s","recipients":[]}', i), now() - interval '1 minute'
       FROM generate_series(1, 5) AS i`,
  );
  // Another replica's sweep, draining: it holds the sweep's lock.
  const other = await f.pool.connect();
  try {
    await other.query('BEGIN');
    await other.query("SELECT pg_advisory_xact_lock(hashtext('link:usage-sweep'))");
    f.admission.startSweeper(100);
    await new Promise((r) => setTimeout(r, 400));
    expect(await unconfirmed()).toBe(5);
    await other.query('COMMIT');
  } finally {
    other.release();
  }
  await waitFor(async () => (await unconfirmed()) === 0, 5000);
});

it('prunes batches confirmed longer ago than the replay window, and nothing unconfirmed', async () => {
  const now = Date.now();
  await f.pool.query(
    `INSERT INTO link.usage_batches (id, event, created_at, confirmed_at) VALUES
       ('usb_old', '{}', $1, $1), ('usb_recent', '{}', $2, $2), ('usb_waiting', '{}', $1, NULL)`,
    [new Date(now - 30 * 3600_000), new Date(now - 3600_000)],
  );
  expect(await pruneConfirmedBatches(f.pool, new Date(now - 24 * 3600_000), 1)).toBe(1);
  const { rows } = await f.pool.query<{ id: string }>('SELECT id FROM link.usage_batches ORDER BY id');
  expect(rows.map((r) => r.id)).toEqual(['usb_recent', 'usb_waiting']);
});

it('goes on with a replay that a crash interrupted, and then ends it', async () => {
  await admitSome(3);
  const stream = events();
  // As a replica left it: the new stream recorded, the replay marked due, no batch marked yet.
  const mark = await markDue(stream);
  f.admission.startSweeper(100);
  await waitFor(
    async () => (await replayDue(f.pool, stream)) === undefined && (await unconfirmed()) === 0,
    5000,
  );
  // Each published again and confirmed again, after the mark.
  const { rows } = await f.pool.query<{ confirmed_at: Date }>('SELECT confirmed_at FROM link.usage_batches');
  expect(rows).toHaveLength(3);
  for (const r of rows) expect(r.confirmed_at.getTime()).toBeGreaterThan(mark.getTime());
});

it('marks a replay page by page, and ends only the replay it was asked for', async () => {
  await admitSome(3);
  const stream = events();
  const mark = await markDue(stream);
  // An older replay's end leaves this one due.
  expect(await unconfirmForReplay(f.pool, stream, new Date(mark.getTime() - 60_000), 2)).toBe(0);
  expect(await replayDue(f.pool, stream)).toEqual(mark);
  // Two batches a page: the third comes in the second.
  expect(await unconfirmForReplay(f.pool, stream, mark, 2)).toBe(3);
  expect(await replayDue(f.pool, stream)).toBeUndefined();
  expect(await unconfirmed()).toBe(3);
});

it('logs events JetStream does not confirm at most once per ten seconds, with how many failed', async () => {
  const lines: { msg: string; failed?: number }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const own = await startAdmission({ logger: pino({ level: 'warn' }, sink) });
  try {
    // No events stream: every usage event is refused at once.
    await (await own.nc.jetstreamManager()).streams.delete(streamNames(own.ns.natsPrefix).events);
    const dev = device();
    const campaign = activeCampaign({ deviceId: dev.id });
    const link: OpenLink = { ...recipient(campaign), campaign, device: dev };
    for (let i = 0; i < 5; i++) await own.admission.admit(link);
    await waitFor(() => lines.length > 0);
    await new Promise((r) => setTimeout(r, 300));
    const unconfirmedLines = lines.filter((l) => l.msg === 'usage events not confirmed yet; will retry');
    expect(unconfirmedLines).toHaveLength(1);
  } finally {
    await own.close();
  }
});

it('keeps a replay due while rows another statement held are still confirmed', async () => {
  await admitSome(3);
  const stream = events();
  const mark = await markDue(stream);
  // Another replica's statement holds one row (and then rolls back, as on a timeout).
  const other = await f.pool.connect();
  try {
    await other.query('BEGIN');
    await other.query(
      'SELECT 1 FROM link.usage_batches WHERE id = (SELECT min(id) FROM link.usage_batches) FOR UPDATE',
    );
    expect(await unconfirmForReplay(f.pool, stream, mark)).toBe(2);
    expect(await replayDue(f.pool, stream)).toEqual(mark);
    await other.query('ROLLBACK');
  } finally {
    other.release();
  }
  expect(await unconfirmForReplay(f.pool, stream, mark)).toBe(1);
  expect(await replayDue(f.pool, stream)).toBeUndefined();
});
