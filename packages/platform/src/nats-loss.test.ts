import { connect, type NatsConnection } from 'nats';
import pino from 'pino';
import { type PrivateStore, startPrivateStore } from '../../../test/support/private-store';
import { consumeDurable, ensureStreams, follower, keepConsuming, publishJson, streamNames } from './nats';

// A NATS that comes back without its files, on a server of this test's own: the consumers of
// every kind must follow the streams created anew, though no server was left to report them lost.

const logger = pino({ level: 'silent' });
const prefix = 'loss';

let nats: PrivateStore;
let nc: NatsConnection;

beforeEach(async () => {
  nats = await startPrivateStore('nats');
  nc = await connect({ servers: nats.url, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
  await ensureStreams(await nc.jetstreamManager(), prefix);
});

afterEach(async () => {
  await nats?.up();
  await nc?.close();
  await nats?.remove();
});

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills the server, starts it without its files, and creates the streams, as the keepers would. */
async function loseFiles(): Promise<void> {
  await nats.restartEmpty();
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await ensureStreams(await nc.jetstreamManager(), prefix);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

it('a follower sees the first messages of the stream created anew', async () => {
  const js = nc.jetstream();
  const seen: string[] = [];
  const open = follower(js, {
    stream: streamNames(prefix).events,
    filterSubjects: `${prefix}.events.>`,
    from: 'new',
  });
  const following = await keepConsuming(open, 'follower', logger, (msg) => {
    seen.push(msg.string());
    msg.ack();
  });
  try {
    // Ten messages, so that the old stream's sequence numbers run past what the new one holds.
    for (let i = 0; i < 10; i++) await publishJson(js, `${prefix}.events.x`, `old ${i}`);
    await until(() => seen.length === 10);
    await loseFiles();
    // One message: stream sequence 1 of the new stream.
    await publishJson(js, `${prefix}.events.x`, 'new');
    await until(() => seen.includes('"new"'));
    // One consumer pulls: none left behind by the follower that was ended.
    await new Promise((r) => setTimeout(r, 2000));
    const consumers = await (await nc.jetstreamManager()).consumers.list(streamNames(prefix).events).next();
    expect(consumers).toHaveLength(1);
  } finally {
    await following.stop();
  }
});

it('a durable consumer is created again on the stream created anew and gets its messages', async () => {
  const js = nc.jetstream();
  const jsm = await nc.jetstreamManager();
  const seen: string[] = [];
  const stop = await consumeDurable(
    js,
    jsm,
    {
      stream: streamNames(prefix).events,
      durable: 'loss-durable',
      filterSubject: `${prefix}.events.>`,
      deliver: 'all',
    },
    async (msg) => void seen.push(msg.string()),
    logger,
  );
  try {
    await publishJson(js, `${prefix}.events.x`, 'before');
    await until(() => seen.length === 1);
    await loseFiles();
    await publishJson(js, `${prefix}.events.x`, 'after');
    await until(() => seen.includes('"after"'));
  } finally {
    await stop();
  }
});
