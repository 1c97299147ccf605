import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import pino from 'pino';
import { createTestDatabase, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { withTransaction } from './db';
import { ensureStreams } from './nats';
import { enqueue, enqueueAll, type Outbox, OutboxRelay } from './outbox';

const prefix = uniqueName('outbox').replace(/[^a-z0-9]/gi, '_');
const outbox: Outbox = { table: 'outbox', msgIdPrefix: 'test-outbox', relayLock: `${prefix}:relay` };
let db: { url: string; drop: () => Promise<void> };
let pool: Pool;
let nc: NatsConnection;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new Pool({ connectionString: db.url });
  await pool.query(`CREATE TABLE outbox (
    id bigserial PRIMARY KEY, subject text NOT NULL, payload jsonb NOT NULL, trace_context jsonb,
    created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz, refused text)`);
  nc = await connect({ servers: TEST_SERVERS.nats });
  await ensureStreams(await nc.jetstreamManager(), prefix);
});

afterAll(async () => {
  const jsm = await nc.jetstreamManager();
  for (const s of await jsm.streams.names().next())
    if (s.startsWith(prefix.toUpperCase())) await jsm.streams.delete(s);
  await nc.close();
  await pool.end();
  await db.drop();
});

describe('OutboxRelay', () => {
  it('publishes on stopping what was committed after its last pass, which no kick announced', async () => {
    // A sweep far apart, so only the stop itself can publish the row.
    const relay = new OutboxRelay(outbox, pool, nc.jetstream(), pino({ level: 'silent' }), 3_600_000);
    relay.start();
    await relay.idle();
    await withTransaction(pool, (client) => enqueue(outbox, client, `${prefix}.events.test`, { n: 1 }));
    await relay.stop();
    const { rows } = await pool.query('SELECT sent_at FROM outbox');
    expect(rows).toHaveLength(1);
    expect(rows[0].sent_at).not.toBeNull();
  });

  it('publishes the rows of one order key in their order, and every row once', async () => {
    const keyed: Outbox = {
      ...outbox,
      relayLock: `${prefix}:keyed`,
      orderKey: ({ payload }) => (payload as { key: string }).key,
    };
    const subject = `${prefix}.events.keyed`;
    // Three keys' rows interleaved, as changes of several recipients arrive.
    const written = Array.from({ length: 60 }, (_, n) => ({ subject, payload: { key: `k${n % 3}`, n } }));
    await withTransaction(pool, (client) => enqueueAll(keyed, client, written));
    const relay = new OutboxRelay(keyed, pool, nc.jetstream(), pino({ level: 'silent' }), 3_600_000);
    relay.start();
    await relay.idle();
    await relay.stop();
    const jsm = await nc.jetstreamManager();
    const stream = (await jsm.streams.find(subject)) as string;
    // The stream's messages in the order it stored them.
    const seen: { key: string; n: number }[] = [];
    const { state } = await jsm.streams.info(stream);
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      if (m.subject === subject) seen.push(m.json());
    }
    expect(seen).toHaveLength(60);
    for (const key of ['k0', 'k1', 'k2']) {
      const ns = seen.filter((e) => e.key === key).map((e) => e.n);
      expect(ns).toEqual([...ns].sort((a, b) => a - b));
      expect(ns).toHaveLength(20);
    }
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL');
    expect(rows[0].n).toBe(0);
  });
});
