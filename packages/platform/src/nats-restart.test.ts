import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { createTestDatabase } from '../../../test/support/isolation';
import { type PrivateStore, startPrivateStore } from '../../../test/support/private-store';
import { withTransaction } from './db';
import { ensureStreams, streamConfigChanges, streamConfigs, streamNames } from './nats';
import { recordStreamCreation, type StreamEpoch, streamCreated } from './stream-epochs';

// A single NATS server restarted with its files keeps its streams, and the services must see the
// same streams, not streams "created anew" (which makes them republish every snapshot and every
// usage batch of the last day). On nats-server 2.9 (standalone, file storage) a stream update
// rewrites its metadata so that `created` changes at the next restart (nats-io/nats-server#8470):
// ensureStreams, which every start runs, must not update a stream already as wanted.

const PREFIX = 'restartcheck';

let nats: PrivateStore;
let db: { url: string; drop: () => Promise<void> };
let pool: Pool;

beforeAll(async () => {
  nats = await startPrivateStore('nats');
  db = await createTestDatabase();
  pool = new Pool({ connectionString: db.url, max: 1 });
  await pool.query(
    'CREATE TABLE stream_epochs (name text PRIMARY KEY, created text NOT NULL, recorded_at timestamptz NOT NULL)',
  );
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  await nats?.remove();
});

/** What a service start does with the streams: ensures them, then compares their creation instants with the recorded ones. */
async function serviceStart(): Promise<{ created: (string | undefined)[]; epochs: StreamEpoch[] }> {
  const nc: NatsConnection = await connect({ servers: nats.url });
  try {
    const jsm = await nc.jetstreamManager();
    await ensureStreams(jsm, PREFIX, { replicas: 1 });
    const created: (string | undefined)[] = [];
    const epochs: StreamEpoch[] = [];
    for (const name of Object.values(streamNames(PREFIX))) {
      const instant = await streamCreated(jsm, name);
      created.push(instant);
      if (instant)
        epochs.push(
          await withTransaction(pool, (client) =>
            recordStreamCreation(client, 'stream_epochs', name, instant),
          ),
        );
    }
    return { created, epochs };
  } finally {
    await nc.close();
  }
}

describe('a single NATS server restarted with its files', () => {
  it('keeps the streams the services ensured, by their creation instants', async () => {
    // Two starts (two services, or a restart of one) before the first restart of NATS.
    const first = await serviceStart();
    expect(first.epochs).toEqual(['first', 'first']);
    expect(first.created.every(Boolean)).toBe(true);
    expect((await serviceStart()).epochs).toEqual(['same', 'same']);

    for (let restart = 1; restart <= 2; restart++) {
      await nats.kill();
      await nats.restart();
      // Every service starts again after it, and the stream keeper runs.
      const after = await serviceStart();
      expect({ restart, ...after }).toEqual({ restart, created: first.created, epochs: ['same', 'same'] });
    }
  }, 60_000);
});

describe('streamConfigChanges', () => {
  const [state, events] = streamConfigs('p', { replicas: 1 });
  // As JetStream reports them, its defaults filled in.
  const reported = (cfg: Record<string, unknown>) => ({
    max_consumers: -1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msgs_per_subject: -1,
    discard: 'old',
    duplicate_window: 120_000_000_000,
    num_replicas: 1,
    ...cfg,
  });

  it('finds nothing to change in streams as wanted', () => {
    expect(streamConfigChanges(reported(state), state)).toEqual([]);
    expect(streamConfigChanges(reported(events), events)).toEqual([]);
    expect(streamConfigChanges(reported({ ...state, num_replicas: 3 }), streamConfigs('p')[0])).toEqual([]);
  });

  it('names what differs', () => {
    expect(streamConfigChanges(reported({ ...events, num_replicas: 3 }), events)).toEqual(['num_replicas']);
    expect(streamConfigChanges(reported({ ...state, subjects: ['p.state.>', 'x.>'] }), state)).toEqual([
      'subjects',
    ]);
    expect(streamConfigChanges(reported({ ...events, max_age: 0 }), events)).toEqual(['max_age']);
  });
});
