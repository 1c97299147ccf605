import {
  enqueueAll as enqueueAllTo,
  enqueue as enqueueTo,
  type Outbox,
  type OutboxMessage,
} from '@outreach/platform';
import type { PoolClient } from 'pg';

/**
 * The campaign service's outbox (its schema's `outbox` table; ids and lock as they always were).
 * Each subject carries one campaign's, device's or key's snapshots (or the lifecycle events), and
 * consumers hold each entity apart: only a subject's own messages need their written order, so
 * the snapshots a lost stream is given again go side by side.
 */
export const CAMPAIGN_OUTBOX: Outbox = {
  table: 'outbox',
  msgIdPrefix: 'outbox',
  relayLock: 'campaigns:outbox-relay',
  orderKey: ({ subject }) => subject,
};

/** Adds a message to the campaign service's outbox inside the caller's transaction. */
export const enqueue = (client: PoolClient, subject: string, payload: unknown): Promise<void> =>
  enqueueTo(CAMPAIGN_OUTBOX, client, subject, payload);

/** Adds messages to the campaign service's outbox in one statement inside the caller's transaction. */
export const enqueueAll = (client: PoolClient, messages: readonly OutboxMessage[]): Promise<void> =>
  enqueueAllTo(CAMPAIGN_OUTBOX, client, messages);
