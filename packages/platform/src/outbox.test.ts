import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import pino from 'pino';
import { createTestDatabase, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { withTransaction } from './db';
import { ensureStreams } from './nats';
import { enqueue, type Outbox, OutboxRelay } from './outbox';

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
});
