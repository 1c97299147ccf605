import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { deleteNatsStreams, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import { ConfigError, loadConfig } from './config';
import { ensureStreams, NATS_STREAM_CONFIG, streamConfigs, streamNames } from './nats';

describe('NATS_STREAM_REPLICAS', () => {
  it('is 1 unless set, and JetStream’s range of 1 to 5', () => {
    expect(loadConfig(NATS_STREAM_CONFIG, {}).NATS_STREAM_REPLICAS).toBe(1);
    expect(loadConfig(NATS_STREAM_CONFIG, { NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3);
    for (const bad of ['0', '6', 'three'])
      expect(() => loadConfig(NATS_STREAM_CONFIG, { NATS_STREAM_REPLICAS: bad })).toThrow(ConfigError);
  });

  it('sets both streams’ num_replicas, and leaves it out when not given', () => {
    const configs = streamConfigs('p', { replicas: 3 });
    expect(configs.map((c) => [c.name, c.num_replicas])).toEqual([
      ['P_STATE', 3],
      ['P_EVENTS', 3],
    ]);
    // Unset, an update leaves the stream's replicas as they are (nats.js merges the update).
    for (const c of streamConfigs('p')) expect(c).not.toHaveProperty('num_replicas');
  });
});

// A single NATS server, as in the tests, runs no stream with more than one replica: that more than
// one reaches JetStream shows only as its refusal. A cluster is needed to see R3 streams made.
describe('ensureStreams with replicas (real NATS, one server)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const prefixes: string[] = [];
  const fresh = () => {
    const p = uniqueName('r');
    prefixes.push(p);
    return p;
  };
  const replicasOf = async (prefix: string) =>
    Promise.all(
      Object.values(streamNames(prefix)).map(
        async (name) => (await jsm.streams.info(name)).config.num_replicas,
      ),
    );

  beforeAll(async () => {
    nc = await connect({ servers: TEST_SERVERS.nats });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    await nc.close();
    for (const p of prefixes) await deleteNatsStreams(p);
  });

  it('creates and updates both streams with one replica', async () => {
    const prefix = fresh();
    await ensureStreams(jsm, prefix, { replicas: 1 });
    expect(await replicasOf(prefix)).toEqual([1, 1]);
    await ensureStreams(jsm, prefix, { replicas: 1 });
    expect(await replicasOf(prefix)).toEqual([1, 1]);
  });

  it('passes more replicas to JetStream on create, which a single server refuses', async () => {
    await expect(ensureStreams(jsm, fresh(), { replicas: 3 })).rejects.toThrow(/replicas/i);
  });

  it('passes more replicas to JetStream on update', async () => {
    const prefix = fresh();
    await ensureStreams(jsm, prefix);
    // What a single server makes of it depends on its version: nats-server 2.9 records the
    // replicas (and runs the stream on its one server), a later one may refuse them with its reason.
    const outcome = await ensureStreams(jsm, prefix, { replicas: 3 }).then(
      () => 'updated',
      (err: Error) => err.message,
    );
    if (outcome === 'updated') expect(await replicasOf(prefix)).toEqual([3, 3]);
    else expect(outcome).toMatch(/replicas/i);
  });
});
