import {
  subjects,
  type UsageAdmittedBatch,
  type UsageStarts,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { type Clock, type JetStreamClient, newId, publishJson, runPeriodically } from '@outreach/platform';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import {
  type ConversationRecord,
  deleteBatches,
  listLegacyUnpublished,
  listUnconfirmed,
  markLegacyPublished,
} from './conversations.repository';
import { GroupCommit } from './group-commit';

// Written batches announced together at most, and conversations one usage event carries at
// most: a start instant each (~14 bytes) and a recipient's ids (~100 bytes) per recipient of a
// batch, so an event stays well under NATS's default 1 MB payload limit.
const MAX_BATCHES_PER_ANNOUNCEMENT = 100;
const MAX_EVENT_CONVERSATIONS = 2000;

/** A written batch, as its usage event carries it. */
export interface UsageBatchEvent {
  id: string;
  batch: UsageStartsBatch;
}

/** What announcing usage needs. */
export interface UsageAnnouncerDeps {
  pool: Pool;
  js: JetStreamClient;
  natsPrefix: string;
  clock: Clock;
  logger: Logger;
  /** Least time between usage events: written batches wait up to this long to go together. */
  usagePublishMs: number;
}

/**
 * Announces written batches of admissions (their outbox rows in `link.usage_batches`) in
 * UsageStarts events, deletes each row once JetStream has confirmed its event, and republishes
 * the rows left unconfirmed (after a crash between the write and the publish, or while NATS is
 * down) from a sweeper.
 */
export class UsageAnnouncer {
  /** Written batches waiting to be announced together (see `announceTogether`). */
  private readonly announcements: GroupCommit<UsageBatchEvent>;
  private readonly confirmed: GroupCommit<string>;
  /** Stops the sweeper (see `startSweeper`). */
  private stopSweeper: (() => Promise<void>) | undefined;
  /** Usage events being published (close waits for them). */
  private readonly publishing = new Set<Promise<void>>();

  constructor(private readonly deps: UsageAnnouncerDeps) {
    this.announcements = new GroupCommit((batches) => this.announceTogether(batches), deps.usagePublishMs, {
      maxBatch: MAX_BATCHES_PER_ANNOUNCEMENT,
      spaced: true,
    });
    this.confirmed = new GroupCommit((ids) => deleteBatches(deps.pool, ids), 20);
  }

  /**
   * Announces a batch whose row is written. Not awaited by the write: the starts are durable
   * already, and a failed announcement is the sweeper's to retry.
   */
  announce(batch: UsageBatchEvent): void {
    this.announcements.add(batch).catch(() => undefined);
  }

  /** Republishes, now and then every `intervalMs`, the events JetStream has not confirmed. */
  startSweeper(intervalMs: number): void {
    this.stopSweeper = runPeriodically(
      () => this.sweep(intervalMs),
      intervalMs,
      this.deps.logger,
      'usage event sweep failed',
    );
  }

  /** Stops the sweeper, publishes what waits and confirms what JetStream confirmed. */
  async close(): Promise<void> {
    await this.stopSweeper?.();
    await this.announcements.close();
    await Promise.all(this.publishing);
    await this.confirmed.close();
  }

  /**
   * Publishes the batches written since the last event as one event under a new id (events
   * start at least `usagePublishMs` apart), then confirms every one of them. Each JetStream
   * message costs the servers about the same whatever it carries (its store, two deliveries and
   * their acks), so under load one event per interval instead of one per write. If it is not
   * confirmed, each batch stays unconfirmed and the sweeper republishes it under its own id: the
   * consumers apply each batch once whichever event brings it.
   */
  private async announceTogether(batches: UsageBatchEvent[]): Promise<void> {
    const { usageStarts } = subjects(this.deps.natsPrefix);
    await Promise.all(
      eventSized(batches).map((group) => {
        // A lone batch goes under its own id, as the sweeper would republish it.
        const eventId = group.length === 1 ? group[0].id : newId('usb');
        const event: UsageStarts = { eventId, batches: group.map((b) => b.batch) };
        const confirm = () => Promise.all(group.map((b) => this.confirmed.add(b.id))).then(() => undefined);
        return this.publish(usageStarts, eventId, event, confirm);
      }),
    );
  }

  /** Publishes a usage event (message id `id`) and, once JetStream confirmed it, runs `confirm`. */
  private publish(subject: string, id: string, event: unknown, confirm: () => Promise<void>): Promise<void> {
    const published = this.publishOnce(subject, id, event, confirm);
    this.publishing.add(published);
    void published.then(() => this.publishing.delete(published));
    return published;
  }

  private async publishOnce(
    subject: string,
    id: string,
    event: unknown,
    confirm: () => Promise<void>,
  ): Promise<void> {
    try {
      await publishJson(this.deps.js, subject, event, id);
      await confirm();
    } catch (err) {
      this.deps.logger.warn({ err, batchId: id }, 'usage event not confirmed yet; will retry');
    }
  }

  private async sweep(graceMs: number): Promise<void> {
    const before = new Date(this.deps.clock().getTime() - graceMs);
    const names = subjects(this.deps.natsPrefix);
    // A page at a time, published together: a backlog left by a NATS outage drains quickly.
    const batches = await listUnconfirmed(this.deps.pool, before, 200);
    await Promise.all(
      batches.map((batch) => {
        const confirm = () => this.confirmed.add(batch.id);
        const stored = JSON.parse(batch.event) as UsageStartsBatch | UsageAdmittedBatch;
        // Each batch only ever goes on the subject of the form it was written in (an older
        // version wrote UsageAdmittedBatch), so no conversation is applied under both schemes.
        if ('conversations' in stored)
          return this.publish(names.usageAdmittedBatch, batch.id, stored, confirm);
        const event: UsageStarts = { eventId: batch.id, batches: [stored] };
        return this.publish(names.usageStarts, batch.id, event, confirm);
      }),
    );
    // Conversations the previous version wrote and did not announce: a batch each, under its id.
    const legacy = await listLegacyUnpublished(this.deps.pool, before, 200);
    await Promise.all(
      legacy.map((row) =>
        this.publish(names.usageAdmittedBatch, row.id, legacyBatchEvent(row.id, row), () =>
          markLegacyPublished(this.deps.pool, row.id, this.deps.clock()),
        ),
      ),
    );
  }
}

/**
 * Groups batches in order so that no group's event carries more than MAX_EVENT_CONVERSATIONS
 * conversations (a batch larger than that alone goes in a group of its own).
 */
export function eventSized(batches: readonly UsageBatchEvent[]): UsageBatchEvent[][] {
  const groups: UsageBatchEvent[][] = [];
  let current: UsageBatchEvent[] = [];
  let size = 0;
  for (const batch of batches) {
    const n = conversationsOf(batch.batch);
    if (current.length > 0 && size + n > MAX_EVENT_CONVERSATIONS) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(batch);
    size += n;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** How many conversations a written batch holds. */
function conversationsOf(batch: UsageStartsBatch): number {
  let n = 0;
  for (const r of batch.recipients) n += r.startedAtMs.length;
  return n;
}

/** The event of a conversation the version before usage batches wrote and never announced. */
function legacyBatchEvent(batchId: string, row: ConversationRecord): UsageAdmittedBatch {
  return {
    batchId,
    conversations: [
      {
        conversationId: row.id,
        recipientId: row.recipientId,
        campaignId: row.campaignId,
        projectId: row.projectId,
        startedAt: row.startedAt.toISOString(),
      },
    ],
  };
}
