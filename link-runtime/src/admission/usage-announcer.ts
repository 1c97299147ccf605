import {
  subjects,
  type UsageAdmittedBatch,
  type UsageStarts,
  type UsageStartsBatch,
} from '@outreach/contracts';
import {
  type Clock,
  type JetStreamClient,
  newId,
  publishJson,
  recordStreamCreation,
  runPeriodically,
  streamCreated,
  streamNames,
  withTransaction,
} from '@outreach/platform';
import type { JetStreamManager } from 'nats';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import {
  type ConversationRecord,
  confirmBatches,
  listLegacyUnpublished,
  listUnconfirmed,
  markLegacyPublished,
  markReplayDue,
  pruneConfirmedBatches,
  replayDue,
  type UsageBatch,
  unconfirmForReplay,
} from './conversations.repository';
import { GroupCommit } from './group-commit';

// Written batches announced together at most, and conversations one usage event carries at
// most: a start instant each (~14 bytes) and a recipient's ids (~100 bytes) per recipient of a
// batch, so an event stays well under NATS's default 1 MB payload limit.
const MAX_BATCHES_PER_ANNOUNCEMENT = 100;
const MAX_EVENT_CONVERSATIONS = 2000;

// Unconfirmed batches one sweep lists and publishes together, page after page.
const SWEEP_PAGE = 200;

// Any constant shared by every replica works: it lets one sweep drain at a time.
const SWEEP_LOCK = 'link:usage-sweep';

// Least time between two lines about usage events JetStream did not confirm.
const WARN_EVERY_MS = 10_000;

// How often batches kept past USAGE_REPLAY_HOURS are deleted.
const PRUNE_EVERY_MS = 3600_000;

/** A written batch, as its usage event carries it. */
export interface UsageBatchEvent {
  id: string;
  batch: UsageStartsBatch;
}

/** What announcing usage needs. */
export interface UsageAnnouncerDeps {
  pool: Pool;
  js: JetStreamClient;
  jsm: JetStreamManager;
  natsPrefix: string;
  clock: Clock;
  logger: Logger;
  /** Least time between usage events: written batches wait up to this long to go together. */
  usagePublishMs: number;
  /** How long a batch is kept after JetStream confirmed its event, to be replayed if JetStream loses it. */
  replayHours: number;
}

/**
 * Announces written batches of admissions (their outbox rows in `link.usage_batches`) in
 * UsageStarts events, marks each row confirmed once JetStream has confirmed its event, and
 * republishes the rows left unconfirmed (after a crash between the write and the publish, or
 * while NATS is down) from a sweeper. Confirmed rows are kept `replayHours`: when the sweeper
 * finds the events stream created anew (JetStream lost its files, and with them the events not
 * yet applied), it marks them unconfirmed again, so that it publishes every one once more.
 */
export class UsageAnnouncer {
  /** Written batches waiting to be announced together (see `announceTogether`). */
  private readonly announcements: GroupCommit<UsageBatchEvent>;
  private readonly confirmed: GroupCommit<string>;
  /** Stop the sweeper and the pruning (see `startSweeper`). */
  private readonly stops: (() => Promise<void>)[] = [];
  /** The events stream's creation instant last recorded (see `replayForNewStream`). */
  private knownStream: string | undefined;
  /** Set by `close`: a sweep draining a backlog stops after its page. */
  private closing = false;
  /** See `warnUnconfirmed`. */
  private warnedAt = 0;
  private failedSinceWarning = 0;
  /** Usage events being published (close waits for them). */
  private readonly publishing = new Set<Promise<boolean>>();

  constructor(private readonly deps: UsageAnnouncerDeps) {
    this.announcements = new GroupCommit((batches) => this.announceTogether(batches), deps.usagePublishMs, {
      maxBatch: MAX_BATCHES_PER_ANNOUNCEMENT,
      spaced: true,
    });
    this.confirmed = new GroupCommit((ids) => confirmBatches(deps.pool, ids, deps.clock()), 20);
  }

  /**
   * Announces a batch whose row is written. Not awaited by the write: the starts are durable
   * already, and a failed announcement is the sweeper's to retry.
   */
  announce(batch: UsageBatchEvent): void {
    this.announcements.add(batch).catch(() => undefined);
  }

  /**
   * Republishes, now and then every `intervalMs`, the events JetStream has not confirmed (and all
   * kept ones when the events stream is new); deletes kept batches past `replayHours` hourly.
   */
  startSweeper(intervalMs: number): void {
    const { logger } = this.deps;
    this.stops.push(
      runPeriodically(() => this.sweep(intervalMs), intervalMs, logger, 'usage event sweep failed'),
    );
    this.stops.push(
      runPeriodically(() => this.prune(), PRUNE_EVERY_MS, logger, 'pruning confirmed usage batches failed'),
    );
  }

  /** Stops the sweeper, publishes what waits and confirms what JetStream confirmed. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.stops.map((stop) => stop()));
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

  /** Publishes a usage event (message id `id`) and, once JetStream confirmed it, runs `confirm`; whether it did. */
  private publish(
    subject: string,
    id: string,
    event: unknown,
    confirm?: () => Promise<void>,
  ): Promise<boolean> {
    const published = this.publishOnce(subject, id, event, confirm);
    this.publishing.add(published);
    void published.then(() => this.publishing.delete(published));
    return published;
  }

  /** Whether the event was confirmed (a failure is logged and left to the sweeper). */
  private async publishOnce(
    subject: string,
    id: string,
    event: unknown,
    confirm?: () => Promise<void>,
  ): Promise<boolean> {
    try {
      await publishJson(this.deps.js, subject, event, id);
      await confirm?.();
      return true;
    } catch (err) {
      this.warnUnconfirmed(err, id);
      return false;
    }
  }

  /**
   * Logs a usage event JetStream did not confirm, at most one line per WARN_EVERY_MS with how many
   * failed since the last: while NATS is down every event and every sweep's batch fails.
   */
  private warnUnconfirmed(err: unknown, batchId: string): void {
    this.failedSinceWarning++;
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.deps.logger.warn(
      { err, batchId, failed: this.failedSinceWarning },
      'usage events not confirmed yet; will retry',
    );
    this.warnedAt = now;
    this.failedSinceWarning = 0;
  }

  private async sweep(graceMs: number): Promise<void> {
    // A replay that fails is tried again at the next sweep; the unconfirmed rows go out meanwhile.
    await this.replayForNewStream().catch((err) =>
      this.deps.logger.warn({ err }, 'usage replay for a new events stream failed; will retry'),
    );
    const before = new Date(this.deps.clock().getTime() - graceMs);
    // A page at a time, published together, page after page while they fill and are confirmed: a
    // backlog left by a NATS outage, or a replay, drains quickly, by one replica at a time.
    while (!this.closing) {
      const { listed, confirmed } = await withTransaction(this.deps.pool, async (client) => {
        const lock = await client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok',
          [SWEEP_LOCK],
        );
        if (!lock.rows[0].ok) return { listed: 0, confirmed: true };
        // The page is listed and confirmed on this transaction's connection: a sweep needs no other.
        const page = await listUnconfirmed(client, before, SWEEP_PAGE);
        const ids = await this.republish(page);
        await confirmBatches(client, ids, this.deps.clock());
        return { listed: page.length, confirmed: ids.length === page.length };
      });
      if (listed < SWEEP_PAGE || !confirmed) break;
    }
    await this.announceLegacy(before);
  }

  /**
   * When the events stream is not the one usage was last published to (by its creation instant),
   * marks a replay due in the transaction that records the new stream; then, while one is due
   * (marked here, by another replica, or before a crash), marks the batches confirmed before it
   * unconfirmed again, page by page, so that the sweep publishes each once more. The consumers
   * apply each batch once, whichever event brings it.
   */
  private async replayForNewStream(): Promise<void> {
    const name = streamNames(this.deps.natsPrefix).events;
    const created = await streamCreated(this.deps.jsm, name);
    // Missing: the stream keeper creates it again, and a later sweep sees it.
    if (created !== undefined && created !== this.knownStream) {
      const epoch = await withTransaction(this.deps.pool, async (client) => {
        const found = await recordStreamCreation(client, 'link.stream_epochs', name, created);
        if (found === 'new') await markReplayDue(client, name, this.deps.clock());
        return found;
      });
      this.knownStream = created;
      if (epoch === 'new')
        this.deps.logger.warn(
          { stream: name, created },
          'the events stream was created anew; kept usage batches to be published again',
        );
    }
    const due = await replayDue(this.deps.pool, name);
    if (due === undefined) return;
    const replayed = await unconfirmForReplay(this.deps.pool, name, due);
    this.deps.logger.warn({ stream: name, replayed }, 'kept usage batches marked for publishing again');
  }

  /** Deletes batches confirmed more than `replayHours` ago. */
  private async prune(): Promise<void> {
    const before = new Date(this.deps.clock().getTime() - this.deps.replayHours * 3600_000);
    const pruned = await pruneConfirmedBatches(this.deps.pool, before);
    if (pruned > 0) this.deps.logger.info({ pruned, before }, 'confirmed usage batches pruned');
  }

  /** Publishes each unconfirmed batch under its own id; the ids of those JetStream confirmed. */
  private async republish(batches: readonly UsageBatch[]): Promise<string[]> {
    const names = subjects(this.deps.natsPrefix);
    const outcomes = await Promise.all(
      batches.map((batch) => {
        const stored = JSON.parse(batch.event) as UsageStartsBatch | UsageAdmittedBatch;
        // Each batch only ever goes on the subject of the form it was written in (an older
        // version wrote UsageAdmittedBatch), so no conversation is applied under both schemes.
        if ('conversations' in stored) return this.publish(names.usageAdmittedBatch, batch.id, stored);
        const event: UsageStarts = { eventId: batch.id, batches: [stored] };
        return this.publish(names.usageStarts, batch.id, event);
      }),
    );
    return batches.filter((_, i) => outcomes[i]).map((b) => b.id);
  }

  /** Announces conversations the previous version wrote and did not announce: a batch each, under its id. */
  private async announceLegacy(before: Date): Promise<void> {
    const names = subjects(this.deps.natsPrefix);
    const legacy = await listLegacyUnpublished(this.deps.pool, before, SWEEP_PAGE);
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
