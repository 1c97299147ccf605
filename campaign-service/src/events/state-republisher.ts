import {
  isStreamNotFound,
  type Logger,
  runPeriodically,
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
  let created: string;
  try {
    ({ created } = await deps.jsm.streams.info(name));
  } catch (err) {
    // Lost and not created again yet: the stream keeper does that, and the next check sees it.
    if (isStreamNotFound(err)) return 0;
    throw err;
  }
  const outcome = await withTransaction(deps.pool, async (client) => {
    // A row inserted (xmax 0) is this database's first check; one updated, a stream created anew.
    const claim = await client.query<{ first: boolean }>(
      `INSERT INTO state_streams (name, created, republished_at) VALUES ($1, $2, now())
       ON CONFLICT (name) DO UPDATE SET created = EXCLUDED.created, republished_at = EXCLUDED.republished_at
       WHERE state_streams.created <> EXCLUDED.created
       RETURNING xmax = 0 AS first`,
      [name, created],
    );
    // The known stream, or another replica republished for this one first.
    if (claim.rowCount === 0) return { enqueued: 0, first: false };
    const messages = [
      ...(await lockedDeviceSnapshots(client, deps.natsPrefix)),
      ...(await lockedCampaignSnapshots(client, deps.natsPrefix)),
      ...(await lockedApiKeySnapshots(client, deps.natsPrefix)),
    ];
    await enqueueAll(client, messages);
    return { enqueued: messages.length, first: claim.rows[0].first };
  });
  if (outcome.enqueued > 0) {
    deps.afterCommit();
    const fields = { stream: name, created, snapshots: outcome.enqueued };
    if (outcome.first) deps.logger.info(fields, 'snapshots published to the state stream on its first check');
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
