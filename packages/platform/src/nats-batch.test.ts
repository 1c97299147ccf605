import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  type ConsumerMessages,
  connect,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import pino from 'pino';
import { deferred } from '../../../test/support/deferred';
import { deleteNatsStreams, TEST_SERVERS, uniqueName } from '../../../test/support/isolation';
import {
  consumeDurable,
  consumeDurableBatch,
  ensureStreams,
  follower,
  keepConsuming,
  keepStreams,
  publishJson,
  streamNames,
} from './nats';
import { TIMED_OUT, within } from './within';

const logger = pino({ level: 'silent' });

describe('consumeDurableBatch (real NATS)', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let prefix: string;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    prefix = uniqueName('b');
    nc = await connect({ servers: TEST_SERVERS.nats });
    js = nc.jetstream();
    jsm = await nc.jetstreamManager();
    await ensureStreams(jsm, prefix);
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  afterAll(async () => {
    await nc.close();
    await deleteNatsStreams(prefix);
  });

  const subject = (name: string) => `${prefix}.events.${name}`;
  const publishMany = async (name: string, n: number) => {
    for (let i = 0; i < n; i++) await publishJson(js, subject(name), { i });
  };
  const start = async (
    name: string,
    handle: (msgs: JsMsg[]) => Promise<void>,
    batch: { maxBatch?: number; maxWaitMs?: number },
  ) => {
    const stop = await consumeDurableBatch(
      js,
      jsm,
      {
        stream: streamNames(prefix).events,
        durable: `${prefix}-${name}`,
        filterSubject: subject(name),
        deliver: 'all',
      },
      handle,
      logger,
      batch,
    );
    stops.push(stop);
  };
  const consumerInfo = (name: string) => jsm.consumers.info(streamNames(prefix).events, `${prefix}-${name}`);
  const until = async (check: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const seqs = (msgs: JsMsg[]) => msgs.map((m) => m.seq);

  it('hands waiting messages over in batches no larger than maxBatch, each message once', async () => {
    await publishMany('many', 50);
    const batches: number[][] = [];
    await start('many', async (msgs) => void batches.push(seqs(msgs)), { maxBatch: 20, maxWaitMs: 50 });
    await until(() => batches.flat().length >= 50);
    expect(batches.every((b) => b.length <= 20)).toBe(true);
    expect(batches.length).toBeLessThan(50);
    expect(Math.max(...batches.map((b) => b.length))).toBe(20);
    expect(new Set(batches.flat()).size).toBe(50);
    await until(async () => (await consumerInfo('many')).num_ack_pending === 0);
    const info = await consumerInfo('many');
    expect(info.num_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(Math.max(...batches.flat()));
  });

  it('creates its consumer again when JetStream loses it, and goes on consuming', async () => {
    const received: number[] = [];
    await start('lost', async (msgs) => void received.push(...seqs(msgs)), { maxWaitMs: 5 });
    await publishMany('lost', 1);
    await until(() => received.length === 1);
    // As when NATS comes back without its JetStream files, or an operator deletes the consumer.
    await jsm.consumers.delete(streamNames(prefix).events, `${prefix}-lost`);
    await publishMany('lost', 1);
    // The new consumer delivers from the start of the stream again: handlers are idempotent.
    await until(() => new Set(received).size === 2);
    expect((await consumerInfo('lost')).config.durable_name).toBe(`${prefix}-lost`);
  });

  it('consumes one message at a time through the same loss (consumeDurable)', async () => {
    const received: number[] = [];
    const opts = {
      stream: streamNames(prefix).events,
      durable: `${prefix}-lost-single`,
      filterSubject: subject('lost-single'),
      deliver: 'all' as const,
    };
    stops.push(await consumeDurable(js, jsm, opts, async (msg) => void received.push(msg.seq), logger));
    await publishMany('lost-single', 1);
    await until(() => received.length === 1);
    await jsm.consumers.delete(opts.stream, opts.durable);
    await publishMany('lost-single', 1);
    await until(() => new Set(received).size === 2);
  });

  it('goes on once a stream JetStream lost is created again (keepStreams)', async () => {
    const own = uniqueName('k');
    await ensureStreams(jsm, own);
    const stopKeeping = keepStreams(jsm, own, logger, { everyMs: 100 });
    const received: unknown[] = [];
    const stopConsuming = await consumeDurableBatch(
      js,
      jsm,
      {
        stream: streamNames(own).events,
        durable: `${own}-usage`,
        filterSubject: `${own}.events.usage`,
        deliver: 'all',
      },
      async (msgs) => void received.push(...msgs.map((m) => m.json())),
      logger,
    );
    try {
      await publishJson(js, `${own}.events.usage`, { n: 1 });
      await until(() => received.length === 1);
      // As when NATS comes back without its files: the stream, and its consumer with it, is gone.
      await jsm.streams.delete(streamNames(own).events);
      await until(
        async () => (await jsm.streams.info(streamNames(own).events).catch(() => undefined)) !== undefined,
      );
      await publishJson(js, `${own}.events.usage`, { n: 2 });
      await until(() => received.some((m) => (m as { n: number }).n === 2));
    } finally {
      await stopConsuming();
      await stopKeeping();
      await deleteNatsStreams(own);
    }
  });

  it('follows again once its stream is lost and back (follower, keepConsuming)', async () => {
    const own = uniqueName('o');
    await ensureStreams(jsm, own);
    const seen: string[] = [];
    const open = follower(js, {
      stream: streamNames(own).state,
      filterSubjects: `${own}.state.>`,
      from: 'new',
    });
    const following = await keepConsuming(open, 'test follower', logger, (msg) => {
      seen.push(msg.string());
      msg.ack();
    });
    try {
      await publishJson(js, `${own}.state.campaign.c1`, 'v1');
      await until(() => seen.length === 1);
      await jsm.streams.delete(streamNames(own).state);
      await ensureStreams(jsm, own);
      await publishJson(js, `${own}.state.campaign.c1`, 'v2');
      await until(() => seen.includes('"v2"'));
    } finally {
      await following.stop();
      await deleteNatsStreams(own);
    }
  });

  it('follows again within seconds when JetStream does not tell a follower its stream was deleted', async () => {
    // JetStream tells most waiting pulls of a deleted stream's consumers, but now and then not one
    // of them: only the missed heartbeats tell that follower. Rounds of eight followers go on until
    // at least one was not told, and every follower must have the stream created anew by then.
    // Up to 40 rounds: in one run of the suite 20 rounds of 160 tellings missed none.
    const own = uniqueName('o');
    await ensureStreams(jsm, own);
    const reports: { report?: string }[] = [];
    const watching = pino(
      { level: 'error' },
      { write: (line: string) => void reports.push(JSON.parse(line)) },
    );
    const names = Array.from({ length: 8 }, (_, i) => `f${i}`);
    const seen = new Map(names.map((name) => [name, [] as string[]]));
    const followings = await Promise.all(
      names.map((name) =>
        keepConsuming(
          follower(js, {
            stream: streamNames(own).state,
            filterSubjects: `${own}.state.${name}.*`,
            from: 'new',
          }),
          name,
          watching,
          (msg) => {
            seen.get(name)?.push(msg.string());
            msg.ack();
          },
        ),
      ),
    );
    let untold = 0;
    try {
      for (let round = 0; round < 40 && untold === 0; round++) {
        for (const name of names) await publishJson(js, `${own}.state.${name}.x`, `before ${round}`);
        const reported = reports.length;
        await jsm.streams.delete(streamNames(own).state);
        await ensureStreams(jsm, own);
        for (const name of names) await publishJson(js, `${own}.state.${name}.x`, `after ${round}`);
        await until(() => names.every((name) => seen.get(name)?.includes(`"after ${round}"`)), 10_000);
        const told = reports.slice(reported).filter((r) => r.report === 'consumer_deleted').length;
        untold += names.length - told;
      }
      expect(untold).toBeGreaterThan(0);
    } finally {
      await Promise.all(followings.map((f) => f.stop()));
      await deleteNatsStreams(own);
    }
  }, 150_000);

  describe('stops at once', () => {
    let own: string;
    let open: (resumeFrom?: Date) => Promise<ConsumerMessages>;
    beforeEach(async () => {
      own = uniqueName('o');
      await ensureStreams(jsm, own);
      open = follower(js, { stream: streamNames(own).state, filterSubjects: `${own}.state.>`, from: 'new' });
    });
    afterEach(() => deleteNatsStreams(own));
    const failingHandler = (failed: () => void) => (msg: JsMsg) => {
      msg.ack();
      failed();
      throw new Error('handler failed');
    };

    it('when stopped while its consumer is being opened again', async () => {
      const reopening = deferred();
      const gate = deferred();
      let opens = 0;
      const following = await keepConsuming(
        async (resumeFrom) => {
          if (++opens > 1) {
            reopening.resolve();
            await gate.promise;
          }
          return open(resumeFrom);
        },
        'test follower',
        logger,
        failingHandler(() => undefined),
        { firstMs: 10, maxMs: 10 },
      );
      await publishJson(js, `${own}.state.campaign.c1`, 'fails');
      await reopening.promise;
      const stopping = following.stop();
      // Opened after the stop: nothing will read it.
      gate.resolve();
      expect(await within(stopping, 3000)).not.toBe(TIMED_OUT);
    });

    it('when stopped after its handler failed', async () => {
      const failed = deferred();
      const following = await keepConsuming(open, 'test follower', logger, failingHandler(failed.resolve), {
        firstMs: 60_000,
        maxMs: 60_000,
      });
      await publishJson(js, `${own}.state.campaign.c1`, 'fails');
      await failed.promise;
      expect(await within(following.stop(), 3000)).not.toBe(TIMED_OUT);
    });
  });

  it('waits longer after each failed open while its stream is missing, up to retry.maxMs', async () => {
    const own = uniqueName('o');
    await ensureStreams(jsm, own);
    const open = follower(js, {
      stream: streamNames(own).state,
      filterSubjects: `${own}.state.>`,
      from: 'new',
    });
    const failedAt: number[] = [];
    const seen: string[] = [];
    const following = await keepConsuming(
      async (resumeFrom) => {
        try {
          return await open(resumeFrom);
        } catch (err) {
          failedAt.push(Date.now());
          throw err;
        }
      },
      'test follower',
      logger,
      (msg) => {
        seen.push(msg.string());
        msg.ack();
      },
      { firstMs: 50, maxMs: 200 },
    );
    try {
      await jsm.streams.delete(streamNames(own).state);
      await until(() => failedAt.length >= 5, 5000);
      const gaps = failedAt.slice(1).map((at, i) => at - failedAt[i]);
      // 100, 200, 200, … ms; a fixed wait would open again every 50 ms.
      expect(gaps[0]).toBeGreaterThanOrEqual(90);
      for (const gap of gaps.slice(1)) expect(gap).toBeGreaterThanOrEqual(190);
      await ensureStreams(jsm, own);
      await publishJson(js, `${own}.state.campaign.c1`, 'back');
      await until(() => seen.includes('"back"'), 2000);
    } finally {
      await following.stop();
      await deleteNatsStreams(own);
    }
  });

  it('does not hold a lone message back for more than maxWaitMs', async () => {
    const received: number[] = [];
    await start('lone', async (msgs) => void received.push(msgs.length), { maxBatch: 256, maxWaitMs: 5 });
    const sent = Date.now();
    await publishMany('lone', 1);
    await until(() => received.length === 1, 2000);
    expect(received).toEqual([1]);
    expect(Date.now() - sent).toBeLessThan(1000);
  });

  it('acks nothing until the batch handler succeeds', async () => {
    const { promise: gate, resolve: release } = deferred();
    const inHandler: number[] = [];
    await publishMany('gated', 10);
    await start(
      'gated',
      async (msgs) => {
        inHandler.push(...seqs(msgs));
        await gate;
      },
      { maxBatch: 10, maxWaitMs: 20 },
    );
    try {
      // However the messages were split into batches, the first one is now held in the handler.
      await until(() => inHandler.length > 0);
      await new Promise((r) => setTimeout(r, 200));
      const held = await consumerInfo('gated');
      expect(held.ack_floor.stream_seq).toBe(0);
      expect(held.num_ack_pending).toBeGreaterThanOrEqual(inHandler.length);
    } finally {
      release();
    }
    await until(async () => inHandler.length === 10 && (await consumerInfo('gated')).num_ack_pending === 0);
    const info = await consumerInfo('gated');
    expect(info.ack_floor.stream_seq).toBe(Math.max(...inHandler));
  });

  it('redelivers every message of a failed batch', async () => {
    await publishMany('failing', 5);
    const attempts: Array<{ seqs: number[]; redelivered: boolean[] }> = [];
    await start(
      'failing',
      async (msgs) => {
        attempts.push({ seqs: seqs(msgs), redelivered: msgs.map((m) => m.redelivered) });
        if (attempts.length === 1) throw new Error('database unavailable');
      },
      { maxBatch: 5, maxWaitMs: 50 },
    );
    await until(() => new Set(attempts.slice(1).flatMap((a) => a.seqs)).size === 5);
    const failed = attempts[0].seqs;
    expect(failed).toHaveLength(5);
    const retried = attempts.slice(1);
    expect(new Set(retried.flatMap((a) => a.seqs))).toEqual(new Set(failed));
    expect(retried.flatMap((a) => a.redelivered).every(Boolean)).toBe(true);
    await until(async () => (await consumerInfo('failing')).num_ack_pending === 0);
    expect((await consumerInfo('failing')).ack_floor.stream_seq).toBe(Math.max(...failed));
  });

  it('runs each batch in one consumer span linked to the trace of every message', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      await publishMany('traced', 3);
      const producers = exporter.getFinishedSpans().filter((s) => s.name.startsWith('publish'));
      expect(producers).toHaveLength(3);
      let sizes = 0;
      await start(
        'traced',
        async (msgs) => {
          sizes += msgs.length;
        },
        { maxBatch: 10, maxWaitMs: 50 },
      );
      await until(() => sizes === 3);
      const consumers = exporter.getFinishedSpans().filter((s) => s.name.startsWith('process'));
      expect(consumers).toHaveLength(1);
      expect(consumers[0].attributes['messaging.batch.message_count']).toBe(3);
      expect(consumers[0].links.map((l) => l.context.spanId).sort()).toEqual(
        producers.map((s) => s.spanContext().spanId).sort(),
      );
    } finally {
      trace.disable();
      propagation.disable();
    }
  });
});
