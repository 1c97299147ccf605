import {
  type Logger,
  recordStreamCreation,
  runPeriodically,
  streamCreated,
  streamNames,
  withTransaction,
} from '@outreach/platform';
import type { JetStreamManager } from 'nats';
import type { Pool } from 'pg';
import { lockedApiKeySnapshots } from '../api-keys/api-keys.service';
import { lockedCampaignSnapshots } from '../campaigns/campaigns.service';
import { lockedDeviceSnapshots } from '../devices/devices.service';
import { enqueueAll } from './outbox';

/** What the republisher reads and writes. */
export interface StateRepublisherDeps {
  pool: Pool;
  jsm: JetStreamManager;
  natsPrefix: string;
  logger: Logger;
  /** Called after snapshots were enqueued, so that the relay publishes them now. */
  afterCommit: () => void;
}

/**
 * Enqueues every campaign, device and API key snapshot again when the state stream is not the
 * one they were last enqueued under: JetStream created it anew (it lost its files, or the stream
 * was deleted), so it holds none of the snapshots from which link runtimes and other services
 * rebuild what they know. The stream is told apart by its creation instant, recorded with the
 * snapshots in one transaction, which only one replica wins for a given stream. Returns how many
 * snapshots were enqueued (0 when the stream is the known one; none on a fresh database either,
 * since then there is nothing to republish).
 */
export async function republishForNewStream(deps: StateRepublisherDeps): Promise<number> {
  const name = streamNames(deps.natsPrefix).state;
  const created = await streamCreated(deps.jsm, name);
  // Lost and not created again yet: the stream keeper does that, and the next check sees it.
  if (created === undefined) return 0;
  const outcome = await withTransaction(deps.pool, async (client) => {
    const epoch = await recordStreamCreation(client, 'stream_epochs', name, created);
    // The known stream, or another replica republished for this one first.
    if (epoch === 'same') return { enqueued: 0, epoch };
    const messages = [
      ...(await lockedDeviceSnapshots(client, deps.natsPrefix)),
      ...(await lockedCampaignSnapshots(client, deps.natsPrefix)),
      ...(await lockedApiKeySnapshots(client, deps.natsPrefix)),
    ];
    await enqueueAll(client, messages);
    return { enqueued: messages.length, epoch };
  });
  if (outcome.enqueued > 0) {
    deps.afterCommit();
    const fields = { stream: name, created, snapshots: outcome.enqueued };
    if (outcome.epoch === 'first')
      deps.logger.info(fields, 'snapshots published to the state stream on its first check');
    else deps.logger.warn(fields, 'the state stream was created anew; every snapshot published again');
  }
  return outcome.enqueued;
}

/** Runs `republishForNewStream` now and every `everyMs`; returns the stop. */
export function keepStateStreamFilled(deps: StateRepublisherDeps, everyMs: number): () => Promise<void> {
  return runPeriodically(
    async () => {
      await republishForNewStream(deps);
    },
    everyMs,
    deps.logger,
    'checking the state stream for lost snapshots failed',
  );
}
