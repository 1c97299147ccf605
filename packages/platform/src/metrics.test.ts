import type { AddressInfo } from 'node:net';
import { AckPolicy, connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { Gauge, Registry } from 'prom-client';
import { closeServer } from './listen';
import { registerConsumerLag, registerPoolMetrics, serveMetrics } from './metrics';
import { ensureStreams, streamNames } from './nats';

const PG = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** The value of one sample in the text exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('registerPoolMetrics', () => {
  it('reports the pool counters as they are at scrape time', async () => {
    const pool = new Pool({ connectionString: PG, max: 2 });
    const registry = new Registry();
    registerPoolMetrics(registry, pool);
    try {
      let text = await registry.metrics();
      expect(sample(text, 'db_pool_total')).toBe(0);

      const held = [await pool.connect(), await pool.connect()];
      const queued = pool.query('SELECT 1'); // waits: both connections are checked out
      text = await registry.metrics();
      expect(sample(text, 'db_pool_total')).toBe(2);
      expect(sample(text, 'db_pool_idle')).toBe(0);
      expect(sample(text, 'db_pool_waiting')).toBe(1);

      for (const c of held) c.release();
      await queued;
      text = await registry.metrics();
      expect(sample(text, 'db_pool_total')).toBe(2);
      expect(sample(text, 'db_pool_idle')).toBe(2);
      expect(sample(text, 'db_pool_waiting')).toBe(0);
    } finally {
      await pool.end();
    }
  });
});

describe('registerConsumerLag', () => {
  let nc: NatsConnection;
  const prefix = `tm${Math.random().toString(36).slice(2, 10)}`;
  const stream = streamNames(prefix).events;

  beforeAll(async () => {
    nc = await connect({ servers: NATS });
    await ensureStreams(await nc.jetstreamManager(), prefix);
  });
  afterAll(async () => {
    const jsm = await nc.jetstreamManager();
    for (const name of Object.values(streamNames(prefix)))
      await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  });

  it('exports pending plus unacknowledged messages per durable consumer, and leaves out unknown ones', async () => {
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await jsm.consumers.add(stream, { durable_name: `${prefix}-lag`, ack_policy: AckPolicy.Explicit });
    for (let i = 0; i < 5; i++)
      await js.publish(`${prefix}.events.test`, new TextEncoder().encode(String(i)));
    const registry = new Registry();
    registerConsumerLag(registry, jsm, [
      { stream, consumer: `${prefix}-lag` },
      { stream, consumer: `${prefix}-missing` },
    ]);

    const series = `nats_consumer_pending{stream="${stream}",consumer="${prefix}-lag"}`;
    expect(sample(await registry.metrics(), series)).toBe(5);

    // Two delivered but not acknowledged still count; one acknowledged does not.
    const consumer = await js.consumers.get(stream, `${prefix}-lag`);
    const batch = await consumer.fetch({ max_messages: 3, expires: 2000 });
    const got = [];
    for await (const m of batch) got.push(m);
    expect(got).toHaveLength(3);
    expect(await got[0].ackAck()).toBe(true);
    // A scrape right after the confirmed ack once read the old figure in a loaded CI run:
    // wait briefly for the figure rather than race the server's consumer state.
    let text = await registry.metrics();
    for (let i = 0; i < 40 && sample(text, series) !== 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = await registry.metrics();
    }
    expect(sample(text, series)).toBe(4);
    expect(text).not.toContain(`${prefix}-missing`);
  });

  it('gives up on a slow answer instead of holding up the scrape', async () => {
    const registry = new Registry();
    const never = { consumers: { info: () => new Promise<never>(() => undefined) } };
    registerConsumerLag(registry, never, [{ stream: 'S', consumer: 'c' }], 50);
    const started = Date.now();
    const text = await registry.metrics();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(text).toContain('# TYPE nats_consumer_pending gauge');
    expect(text).not.toContain('consumer="c"');
  });
});

describe('serveMetrics', () => {
  it('answers 500 for a scrape whose collector fails, and goes on serving', async () => {
    const registry = new Registry();
    let failing = true;
    new Gauge({
      name: 'flaky_store_rows',
      help: 'a gauge read from a store when scraped',
      registers: [registry],
      async collect() {
        if (failing) throw new Error('connect ECONNREFUSED');
        this.set(7);
      },
    });
    const server = await serveMetrics(registry, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    try {
      expect((await fetch(url)).status).toBe(500);
      failing = false;
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(sample(await res.text(), 'flaky_store_rows')).toBe(7);
    } finally {
      await closeServer(server);
    }
  });

  it('answers the probes with a readiness, ready or not, and only /metrics without one', async () => {
    let ready = false;
    const probed = await serveMetrics(new Registry(), 0, '127.0.0.1', {
      lifecycle: { isDraining: false },
      started: () => ready,
    });
    const plain = await serveMetrics(new Registry(), 0, '127.0.0.1');
    const at = (server: typeof probed, path: string) =>
      fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`).then((r) => r.status);
    try {
      expect([await at(probed, '/livez'), await at(probed, '/readyz')]).toEqual([200, 503]);
      ready = true;
      expect([await at(probed, '/livez'), await at(probed, '/readyz')]).toEqual([200, 200]);
      expect([await at(plain, '/livez'), await at(plain, '/readyz')]).toEqual([404, 404]);
    } finally {
      await closeServer(probed);
      await closeServer(plain);
    }
  });
});
