import { type Context, context, propagation, SpanKind, trace } from '@opentelemetry/api';
import {
  AckPolicy,
  type ConnectionOptions,
  ConsumerEvents,
  type ConsumerMessages,
  connect,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  JSONCodec,
  type JsMsg,
  millis,
  type NatsConnection,
  nanos,
  headers as natsHeaders,
  RetentionPolicy,
  StorageType,
} from 'nats';
import type { Logger } from 'pino';
import type { VarSpec } from './config';
import { errorCodes, untilReachable } from './first-connect';
import type { Opened } from './lifecycle';
import { runPeriodically } from './periodic';
import { inSpan, linksTo } from './trace-context';

export type { JetStreamClient, JsMsg, NatsConnection } from 'nats';

const codec = JSONCodec();

// The codes of a server not (yet) there: worth trying again, unlike a refused login. A name that
// does not resolve is one (ENOTFOUND): a StatefulSet pod's DNS record is gone while the pod is.
const NOT_THERE_YET = new Set([
  'CONNECTION_REFUSED',
  'CONNECTION_TIMEOUT',
  'TIMEOUT',
  'CONNECTION_CLOSED',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The servers of a NATS URL list as host:port, without any credentials, to name in a log line. */
function serversOf(url: string): string[] {
  return url.split(',').map((server) => server.trim().replace(/^[a-z]+:\/\/(?:[^@/]*@)?/i, ''));
}

/**
 * Connects to NATS, retrying forever on disconnects. A server not there yet (the first connection
 * refused or timing out, its name not resolving) is tried again until it answers, saying so at
 * each attempt, so that a pod started while NATS is down waits for it, within its startup probe,
 * instead of crash-looping (see `untilReachable`, which PostgreSQL's first connection shares);
 * `signal` ends the waiting.
 */
export async function connectNats(
  url: string,
  name: string,
  logger: Logger,
  { signal, ...extra }: Pick<ConnectionOptions, 'noAsyncTraces'> & { signal?: AbortSignal } = {},
): Promise<NatsConnection> {
  const options = {
    servers: url.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    ...extra,
  };
  const nc = await untilReachable(
    () => connect(options),
    (err) => errorCodes(err).some((code) => NOT_THERE_YET.has(code)),
    logger,
    { message: 'NATS not reachable yet; trying again', fields: { servers: serversOf(url) }, signal },
  );
  (async () => {
    for await (const s of nc.status()) logger.info({ type: s.type, data: String(s.data) }, 'NATS status');
  })().catch(() => undefined);
  return nc;
}

/** How the services store the streams, one setting for every service that creates them. */
export const NATS_STREAM_CONFIG = {
  NATS_STREAM_REPLICAS: {
    type: 'int',
    default: 1,
    min: 1,
    // JetStream's own limit.
    max: 5,
    doc: 'replicas of each JetStream stream (3 on a clustered NATS), set when a stream is created and at every start',
  },
} as const satisfies Record<string, VarSpec>;

/** What a service asks of its streams beyond their fixed shape. */
export interface StreamOptions {
  /** JetStream replicas (num_replicas); unset leaves an existing stream's as they are. */
  replicas?: number;
}

/** Names of the two streams, derived from the configured prefix. */
export function streamNames(prefix: string): { state: string; events: string } {
  const base = prefix.toUpperCase().replace(/[^A-Z0-9_-]/g, '_');
  return { state: `${base}_STATE`, events: `${base}_EVENTS` };
}

/**
 * Creates the two JetStream streams, or updates one that exists when its configuration differs
 * from the one wanted:
 * - STATE keeps the latest snapshot per subject (`<prefix>.state.<kind>.<id>`), so a new
 *   or restarted consumer rebuilds the current state of every campaign and device;
 * - EVENTS keeps facts in order for 7 days (`<prefix>.events.>`), deduplicated by message id.
 * A stream already as wanted is left alone: on a single NATS server with file storage, an update
 * rewrites the stream's metadata so that its `created` instant changes at the server's next
 * restart (nats-io/nats-server#8470, seen on 2.9.10), and the services, which tell a stream
 * created anew by that instant (stream-epochs.ts), would republish every snapshot and usage batch.
 * An update JetStream refuses (more replicas than its servers, say) rejects with its reason.
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  prefix: string,
  options: StreamOptions = {},
): Promise<void> {
  for (const cfg of streamConfigs(prefix, options)) {
    let current: Record<string, unknown> | undefined;
    try {
      current = (await jsm.streams.info(cfg.name)).config as unknown as Record<string, unknown>;
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
    }
    if (!current) await jsm.streams.add(cfg);
    // nats.js merges the update into the stream's configuration: what is not given here stays.
    else if (streamConfigChanges(current, cfg).length > 0) await jsm.streams.update(cfg.name, cfg);
  }
}

/**
 * The fields of `wanted` (a configuration from `streamConfigs`) that the stream's `current` one
 * holds otherwise: what an update would change. Only the fields the services set are compared
 * (the server fills in defaults for the others, which an update leaves as they are); subjects as
 * a set.
 */
export function streamConfigChanges(
  current: Record<string, unknown>,
  wanted: Record<string, unknown>,
): string[] {
  const same = (a: unknown, b: unknown): boolean =>
    Array.isArray(a) && Array.isArray(b)
      ? a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i])
      : a === b;
  return Object.keys(wanted).filter((key) => key !== 'name' && !same(current[key], wanted[key]));
}

/** The two streams' full configurations. */
export function streamConfigs(prefix: string, options: StreamOptions = {}) {
  const names = streamNames(prefix);
  const replicas = options.replicas === undefined ? {} : { num_replicas: options.replicas };
  return [
    { name: names.state, subjects: [`${prefix}.state.>`], max_msgs_per_subject: 1 },
    {
      name: names.events,
      subjects: [`${prefix}.events.>`],
      max_age: 7 * 24 * 3600 * 1e9,
      duplicate_window: 120 * 1e9,
    },
  ].map((cfg) => ({ retention: RetentionPolicy.Limits, storage: StorageType.File, ...replicas, ...cfg }));
}

/** JetStream's error code for a stream that does not exist. */
const STREAM_NOT_FOUND = 10059;

/** Whether JetStream refused a request because the stream does not exist. */
export function isStreamNotFound(err: unknown): boolean {
  return (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code === STREAM_NOT_FOUND;
}

/**
 * Checks every `everyMs` that the two streams exist and creates any that JetStream lost (NATS
 * back without its files, a stream deleted), logged; the durable consumers then come back by
 * themselves (see `keepConsuming`). A check while NATS is unreachable fails and is logged as a warning.
 * Returns the stop.
 */
export function keepStreams(
  jsm: JetStreamManager,
  prefix: string,
  logger: Logger,
  { everyMs = 30_000, ...options }: StreamOptions & { everyMs?: number } = {},
): () => Promise<void> {
  return runPeriodically(
    async () => {
      for (const cfg of streamConfigs(prefix, options)) {
        try {
          await jsm.streams.info(cfg.name);
        } catch (err) {
          if (!isStreamNotFound(err)) throw err;
          logger.error({ stream: cfg.name }, 'JetStream lost the stream; creating it again');
          await jsm.streams.add(cfg);
        }
      }
    },
    everyMs,
    logger,
    'checking the JetStream streams failed',
  );
}

/** What `openJetStream` connects with. */
export interface JetStreamSettings {
  NATS_URL: string;
  NATS_PREFIX: string;
  NATS_STREAM_REPLICAS: number;
}

/**
 * Connects a service to NATS (`connectNats`), creates or updates the streams (`ensureStreams`) and
 * keeps them (`keepStreams`), each registered with `opened`, so that the stop ends the keeper and
 * then drains the connection.
 */
export async function openJetStream(
  opened: Opened,
  config: JetStreamSettings,
  name: string,
  logger: Logger,
  connectOptions: Pick<ConnectionOptions, 'noAsyncTraces'> = {},
): Promise<{ nc: NatsConnection; jsm: JetStreamManager; js: JetStreamClient }> {
  const nc = opened.add('nats', await connectNats(config.NATS_URL, name, logger, connectOptions), (c) =>
    c.drain(),
  );
  const jsm = await nc.jetstreamManager();
  const streamOptions = { replicas: config.NATS_STREAM_REPLICAS };
  await ensureStreams(jsm, config.NATS_PREFIX, streamOptions);
  opened.addStop('stream keeper', keepStreams(jsm, config.NATS_PREFIX, logger, streamOptions));
  return { nc, jsm, js: nc.jetstream() };
}

/** Deletes a prefix's streams (and with them their consumers): for tests and benchmarks. */
export async function deleteStreams(jsm: JetStreamManager, prefix: string): Promise<void> {
  for (const name of Object.values(streamNames(prefix))) await jsm.streams.delete(name).catch(() => false);
}

/**
 * Publishes a JSON message to JetStream with the active trace context in its headers and,
 * when given, a message id that JetStream deduplicates on.
 */
export async function publishJson(
  js: JetStreamClient,
  subject: string,
  data: unknown,
  msgID?: string,
): Promise<void> {
  const span = tracer().startSpan(`publish ${genericSubject(subject)}`, {
    kind: SpanKind.PRODUCER,
    attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
  });
  const h = natsHeaders();
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  for (const [k, v] of Object.entries(carrier)) h.set(k, v);
  await inSpan(span, context.active(), async () => {
    await js.publish(subject, codec.encode(data), { headers: h, msgID });
  });
}

/**
 * Runs `fn` inside a consumer span whose parent is the trace context the message carries,
 * so a change and its effect in another service share one trace.
 */
export async function withMessageSpan<T>(
  msg: { subject: string; headers?: JsMsg['headers'] },
  fn: () => Promise<T>,
): Promise<T> {
  const parent = messageContext(msg);
  const span = tracer().startSpan(
    `process ${genericSubject(msg.subject)}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': msg.subject },
    },
    parent,
  );
  return inSpan(span, parent, fn);
}

function tracer() {
  return trace.getTracer('@outreach/platform/nats');
}

// Span names must have low cardinality: entity ids in subjects become `*`.
function genericSubject(subject: string): string {
  return subject.replace(/\.(state\.[a-z]+)\.[^.]+$/, '.$1.*');
}

/** Decodes a JSON message and the trace context it carries. */
export function decodeJson<T>(msg: JsMsg): { data: T; traceContext: Context } {
  return { data: codec.decode(msg.data) as T, traceContext: messageContext(msg) };
}

/** The trace context a message carries in its headers (the active one when it carries none). */
function messageContext(msg: { headers?: JsMsg['headers'] }): Context {
  const carrier: Record<string, string> = {};
  for (const key of msg.headers?.keys() ?? []) carrier[key] = msg.headers!.get(key);
  return propagation.extract(context.active(), carrier);
}

/**
 * The payloads of a batch that `parse` accepts. A message that is not JSON, or that `parse`
 * refuses (undefined), would fail every batch it is in: it is logged as `what` and skipped.
 */
export function parseBatch<T>(
  msgs: readonly JsMsg[],
  parse: (data: unknown) => T | undefined,
  logger: Logger,
  what: string,
): T[] {
  const parsed: T[] = [];
  for (const msg of msgs) {
    let value: T | undefined;
    try {
      value = parse(codec.decode(msg.data));
    } catch {
      value = undefined;
    }
    if (value !== undefined) parsed.push(value);
    else logger.warn({ subject: msg.subject, seq: msg.seq }, `skipping malformed ${what}`);
  }
  return parsed;
}

/** Options of a durable, ordered-per-subject consumer. */
export interface ConsumerOptions {
  stream: string;
  durable: string;
  filterSubject: string;
  /** `last_per_subject` replays the current snapshot of each subject first; `all` every message. */
  deliver: 'all' | 'last_per_subject' | 'new';
}

/**
 * Consumes a stream with a durable pull consumer: each message is handled, then acked;
 * a handler failure naks it for redelivery. Returns a stop function that drains.
 */
export async function consumeDurable(
  js: JetStreamClient,
  jsm: JetStreamManager,
  opts: ConsumerOptions,
  handle: (msg: JsMsg) => Promise<void>,
  logger: Logger,
): Promise<() => Promise<void>> {
  const { stop } = await receive(js, jsm, opts, 256, logger, async (msg) => {
    try {
      await withMessageSpan(msg, () => handle(msg));
      msg.ack();
    } catch (err) {
      logger.warn({ err, subject: msg.subject }, 'event handling failed; will be redelivered');
      msg.nak(1000);
    }
  });
  return stop;
}

/** Hands every message of `opts`' durable consumer to `onMessage` (see `keepConsuming`). */
function receive(
  js: JetStreamClient,
  jsm: JetStreamManager,
  opts: ConsumerOptions,
  maxMessages: number,
  logger: Logger,
  onMessage: (msg: JsMsg) => Promise<void> | void,
): Promise<Consuming> {
  const open = async () =>
    (await ensureDurable(js, jsm, opts)).consume({
      max_messages: maxMessages,
      expires: DURABLE_PULL_EXPIRES_MS,
    });
  return keepConsuming(open, opts.durable, logger, onMessage);
}

/** How long `keepConsuming` waits before opening a consumer again: `firstMs`, doubled per failed open up to `maxMs`. */
export interface RetryDelays {
  firstMs: number;
  maxMs: number;
}

// How long each pull of a consumption waits at the server. JetStream sends a waiting pull a
// heartbeat every half of this, and nats.js, missing two, asks whether the consumer still exists
// and reports it lost if not. That is the only sign of a lost consumer when JetStream does not
// tell its pulls (NATS back without its files; and a deleted stream, whose pulls are told only
// now and then): nats.js's default of 30 s left a follower deaf for 46 s. A durable consumer's
// pulls wait longer: while its handler works on a message no pull waits at the server, so no
// heartbeat comes, and each check that finds the consumer there queues one more pull; its
// handlers write to PostgreSQL and may take seconds, where a follower's only apply a snapshot.
const PULL_EXPIRES_MS = 3000;
const DURABLE_PULL_EXPIRES_MS = 10_000;

// A lost consumer is opened again after a second; while its stream is missing, at most every 5 s,
// so a follower is back within 5 s of the stream keeper making its stream again (every 30 s).
const CONSUMER_RETRY: RetryDelays = { firstMs: 1000, maxMs: 5000 };

function retryDelay(retry: RetryDelays, failures: number): number {
  return Math.min(retry.firstMs * 2 ** failures, retry.maxMs);
}

/** A consumption `keepConsuming` keeps going: `done` settles once `stop` has ended it. */
export interface Consuming {
  done: Promise<void>;
  stop: () => Promise<void>;
}

/**
 * Hands every message of the consumer `open` creates to `onMessage`, one at a time, until `stop`.
 * When JetStream loses the consumer (deleted, or gone with its stream when NATS lost its files),
 * nats.js's consume iterator reports it and then waits for ever. So a second after any such
 * report, and two after any failure, this calls `open` again and consumes anew, from the
 * consumer's delivery policy: a durable one may deliver messages twice (handlers are idempotent);
 * `open` gets the instant of the last message handled (or of the first `open`, less a margin for
 * clocks), from which a `follower` of new messages resumes. While `open` keeps failing (its stream
 * is missing until the stream keeper makes it again), the wait doubles up to `retry.maxMs`, so an
 * outage logs a line every few seconds rather than every second. The first `open` runs before
 * this returns, so a service cannot start without its consumer. `label` names it in logs.
 */
export async function keepConsuming(
  open: (resumeFrom?: Date) => Promise<ConsumerMessages>,
  label: string,
  logger: Logger,
  onMessage: (msg: JsMsg) => Promise<void> | void,
  retry: RetryDelays = CONSUMER_RETRY,
): Promise<Consuming> {
  let stopped = false;
  let failures = 0;
  let resumeFrom = new Date(Date.now() - RESUME_MARGIN_MS);
  let first: ConsumerMessages | undefined = await open();
  let current: ConsumerMessages | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      let messages: ConsumerMessages | undefined;
      try {
        messages = first ?? (await open(resumeFrom));
        first = undefined;
        current = messages;
        failures = 0;
        // Stopped while it was being opened: it is only closed (below), never read.
        if (!stopped) {
          void watchForLoss(messages, label, logger);
          for await (const msg of messages) {
            await onMessage(msg);
            resumeFrom = new Date(millis(msg.info.timestampNanos));
          }
        }
      } catch (err) {
        failures++;
        logger.error(
          { err, consumer: label, attempt: failures, retryInMs: retryDelay(retry, failures) },
          'consumer failed; starting it again',
        );
      } finally {
        closeUnawaited(messages);
      }
      if (stopped) break;
      const delay = retryDelay(retry, failures);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    done,
    stop: async () => {
      stopped = true;
      wake?.();
      // The loop reading it ends once it has handled the messages already received; `done` says when.
      closeUnawaited(current);
      await done;
    },
  };
}

/**
 * Where a follower of new messages starts: at the next message, or, opened again by
 * `keepConsuming`, at `resumeFrom` (the last message it handled comes again; handlers are idempotent).
 */
function followFrom(resumeFrom?: Date): { deliver_policy: DeliverPolicy; opt_start_time?: string } {
  return resumeFrom
    ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: resumeFrom.toISOString() }
    : { deliver_policy: DeliverPolicy.New };
}

/** What a follower reads: a stream's subjects, from the latest message of each or from new ones. */
export interface FollowOptions {
  stream: string;
  filterSubjects: string;
  from: 'last_per_subject' | 'new';
  /** Told of each consumer created, with how many messages it had to deliver then. */
  onOpened?: (pending: number) => void;
}

// How long JetStream keeps a follower's consumer once nothing pulls from it (a closed one).
const FOLLOWER_INACTIVE_MS = 60_000;

/**
 * The `open` of a follower for `keepConsuming`: each call creates an ephemeral pull consumer (in
 * memory, acknowledged message by message, so a delivery lost on the way comes again) and consumes
 * it. Not nats.js's ordered consumers: after a loss they rebuild themselves in a way `close` cannot
 * stop (the rebuilt consumer is attached to the closed iterator and goes on pulling), and resume
 * after the old stream's last sequence number. The handler acknowledges each message.
 */
export function follower(
  js: JetStreamClient,
  opts: FollowOptions,
): (resumeFrom?: Date) => Promise<ConsumerMessages> {
  let jsm: JetStreamManager | undefined;
  return async (resumeFrom) => {
    jsm ??= await js.jetstreamManager();
    const start =
      opts.from === 'last_per_subject'
        ? { deliver_policy: DeliverPolicy.LastPerSubject }
        : followFrom(resumeFrom);
    const info = await jsm.consumers.add(opts.stream, {
      ...start,
      filter_subject: opts.filterSubjects,
      ack_policy: AckPolicy.Explicit,
      inactive_threshold: nanos(FOLLOWER_INACTIVE_MS),
      mem_storage: true,
      num_replicas: 1,
    });
    opts.onOpened?.(info.num_pending);
    return (await js.consumers.get(opts.stream, info.name)).consume({ expires: PULL_EXPIRES_MS });
  };
}

// What keepConsuming resumes from before a consumer has handled anything: the first `open`'s
// instant by this host's clock, less this much, since messages carry the server's.
const RESUME_MARGIN_MS = 5000;

// The reports of a consumer that JetStream lost.
const LOST: readonly string[] = [
  ConsumerEvents.ConsumerDeleted,
  ConsumerEvents.ConsumerNotFound,
  ConsumerEvents.StreamNotFound,
];

/**
 * Closes a consumption without waiting for it: nats.js's `close()` settles only once a reader of
 * the messages runs the stop it queues, and none is left when the consumption was stopped while
 * being opened, or its handler threw out of the loop (waiting for it held a service's shutdown
 * until its deadline). The subscription and timers end at once all the same.
 */
function closeUnawaited(messages: ConsumerMessages | undefined): void {
  void messages?.close();
}

/** Ends `messages` once JetStream reports its consumer gone, so that `keepConsuming` opens it again. */
async function watchForLoss(messages: ConsumerMessages, label: string, logger: Logger): Promise<void> {
  try {
    for await (const status of await messages.status()) {
      if (!LOST.includes(status.type)) continue;
      logger.error(
        { consumer: label, report: status.type },
        'JetStream lost the consumer; creating it again',
      );
      closeUnawaited(messages);
      return;
    }
  } catch {
    // The status stream ends with the messages; nothing to watch then.
  }
}

// Creates the durable consumer on first use; an existing one is used as it is.
async function ensureDurable(js: JetStreamClient, jsm: JetStreamManager, opts: ConsumerOptions) {
  const deliver = {
    all: DeliverPolicy.All,
    last_per_subject: DeliverPolicy.LastPerSubject,
    new: DeliverPolicy.New,
  }[opts.deliver];
  try {
    await jsm.consumers.info(opts.stream, opts.durable);
  } catch {
    await jsm.consumers.add(opts.stream, {
      durable_name: opts.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: deliver,
      filter_subject: opts.filterSubject,
      max_ack_pending: 1000,
    });
  }
  return js.consumers.get(opts.stream, opts.durable);
}

/** How a batch consumer groups messages. */
export interface BatchOptions {
  /** Most messages handed to one call. */
  maxBatch?: number;
  /** How long the oldest waiting message may wait for others to join its batch. */
  maxWaitMs?: number;
}

/**
 * Consumes a stream with a durable pull consumer in batches: the messages that arrive within
 * `maxWaitMs` of the oldest waiting one (at most `maxBatch`) go to one `handleBatch` call inside
 * one consumer span linked to every message's trace. All are acked only after it succeeds; a
 * failure naks them all for redelivery, so the handler must be idempotent per message.
 * Returns a stop function that handles what was already received, then returns.
 */
export async function consumeDurableBatch(
  js: JetStreamClient,
  jsm: JetStreamManager,
  opts: ConsumerOptions,
  handleBatch: (msgs: JsMsg[]) => Promise<void>,
  logger: Logger,
  { maxBatch = 256, maxWaitMs = 5 }: BatchOptions = {},
): Promise<() => Promise<void>> {
  const waiting: JsMsg[] = [];
  const arrivedAt: number[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  // Pull at least two batches ahead so the next batch fills while one is being applied.
  const receiving = await receive(js, jsm, opts, Math.max(256, 2 * maxBatch), logger, (msg) => {
    waiting.push(msg);
    arrivedAt.push(Date.now());
    if (waiting.length === 1 || waiting.length >= maxBatch) notify();
  });
  void receiving.done.finally(() => {
    ended = true;
    notify();
  });
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const applying = (async () => {
    for (;;) {
      if (waiting.length === 0) {
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      const left = arrivedAt[0] + maxWaitMs - Date.now();
      if (waiting.length < maxBatch && !ended && left > 0) {
        await sleep(left);
        continue;
      }
      const batch = waiting.splice(0, maxBatch);
      arrivedAt.splice(0, batch.length);
      try {
        await withBatchSpan(opts.filterSubject, batch, () => handleBatch(batch));
        for (const msg of batch) msg.ack();
      } catch (err) {
        logger.warn(
          { err, subject: opts.filterSubject, size: batch.length },
          'batch handling failed; will be redelivered',
        );
        for (const msg of batch) msg.nak(1000);
      }
    }
  })();
  return async () => {
    await receiving.stop();
    await applying;
  };
}

/**
 * Consumes several durable consumers with one batch handler (see `consumeDurableBatch`), such as
 * the old and the new subject of an event during a rolling upgrade. Returns one stop function.
 */
export async function consumeDurableBatches(
  js: JetStreamClient,
  jsm: JetStreamManager,
  consumers: readonly ConsumerOptions[],
  handleBatch: (msgs: JsMsg[]) => Promise<void>,
  logger: Logger,
  batching?: BatchOptions,
): Promise<() => Promise<void>> {
  const stops: (() => Promise<void>)[] = [];
  for (const opts of consumers)
    stops.push(await consumeDurableBatch(js, jsm, opts, handleBatch, logger, batching));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}

// One consumer span for a batch, linked to the trace of every message in it.
async function withBatchSpan<T>(subject: string, msgs: JsMsg[], fn: () => Promise<T>): Promise<T> {
  const span = tracer().startSpan(`process ${genericSubject(subject)}`, {
    kind: SpanKind.CONSUMER,
    links: linksTo(msgs.map(messageContext)),
    attributes: {
      'messaging.system': 'nats',
      'messaging.destination.name': subject,
      'messaging.batch.message_count': msgs.length,
    },
  });
  return inSpan(span, context.active(), fn);
}
