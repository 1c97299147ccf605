import { readUsageStarts, subjects, USAGE_BATCHING, type UsageStartsBatch } from '@outreach/contracts';
import type { JetStreamClient, JetStreamManager, JsMsg } from 'nats';
import type { Logger } from 'pino';
import { consumeDurableBatch, consumeDurableBatches, parseBatch, streamNames } from './nats';

/** How a service applies usage events, and the names of its durable consumers. */
export interface UsageConsumer<C> {
  /** The durables (shared by every instance of the service) for each kind of event. */
  durables: { starts: string; batches: string; single: string };
  /** Applies written batches of starts by recipient (UsageStarts), each exactly once. */
  applyStarts: (batches: UsageStartsBatch[]) => Promise<unknown>;
  /** Reads the conversations of an older link runtime's event; undefined when none can be applied. */
  readConversations: (event: unknown) => C[] | undefined;
  /** Applies conversations of older link runtimes' events, each exactly once. */
  applyConversations: (conversations: C[]) => Promise<unknown>;
}

/**
 * Consumes usage events in batches with durable consumers, so a service that was down picks up
 * where it stopped: written batches by recipient (`UsageStarts`) on one consumer, and, for link
 * runtimes of older versions and what they left, conversation batches and single events on their
 * own subjects and consumers, which older instances of the service share. Returns the stop.
 */
export async function consumeUsageEvents<C>(
  deps: { js: JetStreamClient; jsm: JetStreamManager; prefix: string; logger: Logger },
  consumer: UsageConsumer<C>,
): Promise<() => Promise<void>> {
  const { js, jsm, logger } = deps;
  const names = subjects(deps.prefix);
  const stream = streamNames(deps.prefix).events;
  const { durables } = consumer;
  const stopStarts = await consumeDurableBatch(
    js,
    jsm,
    { stream, durable: durables.starts, filterSubject: names.usageStarts, deliver: 'all' },
    async (msgs: JsMsg[]) => {
      await consumer.applyStarts(parseBatch(msgs, readUsageStarts, logger, 'usage event').flat());
    },
    logger,
    USAGE_BATCHING,
  );
  const stopOlder = await consumeDurableBatches(
    js,
    jsm,
    [
      { stream, durable: durables.batches, filterSubject: names.usageAdmittedBatch, deliver: 'all' },
      { stream, durable: durables.single, filterSubject: names.usageAdmitted, deliver: 'all' },
    ],
    async (msgs: JsMsg[]) => {
      await consumer.applyConversations(
        parseBatch(msgs, consumer.readConversations, logger, 'usage event').flat(),
      );
    },
    logger,
    USAGE_BATCHING,
  );
  return async () => {
    await Promise.all([stopStarts(), stopOlder()]);
  };
}
