import { setTimeout as sleep } from 'node:timers/promises';
import type { RecipientStarts, UsageStartsBatch } from '@outreach/contracts';
import {
  AppError,
  batchPerTurn,
  isCommandTimeout,
  isPostgresRefusal,
  newId,
  randomBase62,
  sharedFromWhileRunning,
  sharedWhileRunning,
  TIMED_OUT,
  within,
} from '@outreach/platform';
import type Redis from 'ioredis';
import { conversationKey } from '../conversations/conversations.store';
import {
  ADMIT_SCRIPT,
  type AdmissionCall,
  type AdmissionReply,
  LuaScript,
  packAdmissions,
  RELEASE_SCRIPT,
  RELEASE_UNANSWERED_SCRIPT,
  SEED_SCRIPT,
} from './admission.lua';
import {
  type ConversationRecord,
  countCampaignConversations,
  type FactsQuery,
  fenceUsageBatch,
  findKeyedStart,
  insertConversations,
  loadRecipientsFacts,
  type RecipientFacts,
  type UsageBatch,
} from './conversations.repository';
import { GroupCommit } from './group-commit';
import {
  budgetExhausted,
  cooldown,
  counterLimits,
  countersApply,
  countersUnavailable,
  linkDisabled,
  type OpenLink,
} from './link-checks';
import { DONE_TTL_SECONDS, pendingSeconds, startKeyOf, startOnce } from './start-once';
import { UsageAnnouncer, type UsageAnnouncerDeps } from './usage-announcer';

/** Redis keys of one start: the recipient's counters, the campaign's, and the conversation's record. */
export function startKeys(
  prefix: string,
  recipientId: string,
  campaignId: string,
  conversationId: string,
): [string, string, string, string] {
  return [
    `${prefix}link:rcp:${recipientId}`,
    `${prefix}link:rcp:${recipientId}:starts`,
    `${prefix}link:cmp:${campaignId}:usage`,
    conversationKey(prefix, conversationId),
  ];
}

/** Redis key of the marker set when counters were first found missing (see ADMIT_SCRIPT). */
const lostMarkerKey = (prefix: string): string => `${prefix}link:counters-lost-at`;

// One script run judges at most this many starts, so Redis is never held long by one.
const MAX_ADMISSIONS_PER_RUN = 100;

// Recipients whose facts one statement reads at most (see factsOf).
const MAX_FACTS_PER_READ = 100;

// Counters outlive any window; when they expire they are rebuilt from PostgreSQL like after a flush.
const COUNTER_TTL_SECONDS = 30 * 24 * 3600;

// How long a rebuild waits for this instance's admissions still being written (see seed()).
const REBUILD_WAIT_MS = 5000;

/** The epochs an admission was counted under: what its release must match (RELEASE_SCRIPT). */
interface Counted {
  recipientEpoch: string;
  campaignEpoch: string;
  /** Called once the admission's durable record is written, or failed to be. */
  settled: () => void;
}

const admitScript = new LuaScript(ADMIT_SCRIPT);
const seedScript = new LuaScript(SEED_SCRIPT);
const releaseScript = new LuaScript(RELEASE_SCRIPT);

/** Dependencies of the admission step (and of the announcer of its usage). */
export interface AdmissionDeps extends UsageAnnouncerDeps {
  redis: Redis;
  redisPrefix: string;
  groupCommitMs: number;
  /** After Redis lost the counters, how long rebuilds wait for other replicas' writes (see seed()). */
  rebuildGraceMs: number;
  /** The longest a PostgreSQL statement may run (DB_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
  /** How long an idle conversation is kept (its record is written by the admission itself). */
  conversationTtlSeconds: number;
  /** Whether the admission writes the conversation's Redis record, or leaves it to its first message. */
  recordAtStart: boolean;
  /** Told of each seeding of missing counters: whether the record held anything to restore. */
  onSeeded?: (outcome: 'empty' | 'restored') => void;
  /** Told of each batch of conversations once it is durably written, before their starts are answered. */
  onWritten?: (rows: readonly ConversationRecord[]) => void;
}

/** What the counters say about one start: consumed, or the refusal. */
export interface Admitted {
  conversationId: string;
  startedAt: Date;
}

/**
 * Admission of conversations. Redis holds the counters (a cache, rebuilt from the durable record
 * whenever a key is missing); PostgreSQL holds the record; NATS carries the usage to the
 * services that show it. Admissions are written to PostgreSQL in batches before they are
 * acknowledged, each batch together with its outbox row (a UsageStartsBatch: the batch's
 * start instants by recipient), which is announced in a UsageStarts event and republished until
 * JetStream confirms it (see UsageAnnouncer).
 */
export class Admission {
  private readonly commits: GroupCommit<ConversationRecord>;
  /** Announces written batches in usage events. */
  private readonly usage: UsageAnnouncer;
  /** Admissions counted in Redis whose durable record is not written yet. */
  private readonly unwritten = new Set<Promise<void>>();
  /**
   * A campaign's conversations in the durable record, one count shared by the rebuilds that ask
   * while it is under way. Sharing a count begun before a rebuild's own waits ended is safe: while
   * the campaign's counter is missing no start of the campaign is admitted, so its record cannot
   * change in between.
   */
  private readonly countCampaign = sharedWhileRunning((campaignId: string) =>
    countCampaignConversations(this.deps.pool, campaignId),
  );
  /**
   * A recipient's facts in the durable record, one read shared by the rebuilds of a burst of
   * starts at its link, on the same grounds as countCampaign: a rebuild joins a read under way
   * whose window begins no later than its own (the older starts that read adds leave the window
   * at the next admission).
   */
  private readonly sharedFacts = sharedFromWhileRunning<RecipientFacts>();
  /**
   * The reads of different recipients' facts that arrive together (a campaign's launch: every
   * recipient's first start rebuilds its counters) share one statement.
   */
  private readonly factsOf = batchPerTurn(
    (queries: FactsQuery[]) => loadRecipientsFacts(this.deps.pool, queries),
    {
      maxBatch: MAX_FACTS_PER_READ,
    },
  );
  /**
   * The end of the grace after a loss (see seed()), one timer for all the rebuilds waiting for it:
   * they go on in the same turn, so they ask for a campaign's count while it is under way.
   */
  private readonly graceEnd = sharedWhileRunning((deadline: number) =>
    sleep(Math.max(0, deadline - this.deps.clock().getTime())),
  );
  /** Starts arriving together are judged in one script run, in the order they came. */
  private readonly judge = batchPerTurn((calls: AdmissionCall[]) => this.runAdmissions(calls), {
    maxBatch: MAX_ADMISSIONS_PER_RUN,
  });

  /** How long a start being made holds its client's key (see pendingSeconds). */
  private readonly pendingSeconds: number;

  constructor(private readonly deps: AdmissionDeps) {
    this.pendingSeconds = pendingSeconds(deps.statementTimeoutMs, deps.rebuildGraceMs, REBUILD_WAIT_MS);
    this.commits = new GroupCommit((rows) => this.write(rows), deps.groupCommitMs);
    this.usage = new UsageAnnouncer(deps);
  }

  /** Throws the refusal a new conversation would get now, consuming nothing. */
  async check(link: OpenLink): Promise<void> {
    await this.run(link, 'none', false);
  }

  /**
   * Admits one conversation: consumes one of every cap and remembers the conversation in one
   * atomic script, records it durably, announces it.
   */
  async admit(link: OpenLink, startKey?: string): Promise<Admitted> {
    const conversationId = newId('cnv');
    const startedAt = this.deps.clock();
    let counted: Counted;
    try {
      counted = (await this.run(link, conversationId, true, startedAt)) as Counted;
    } catch (err) {
      // Refused as unavailable, so it must not stay counted should Redis still run it. Sent before
      // the refusal and not awaited: Redis runs it after the admission whenever it gets to them,
      // and before any later start of this process. As EVAL, not EVALSHA, which a Redis without
      // the script would answer NOSCRIPT, leaving the body to go after later commands.
      if (isCommandTimeout(err) && this.deps.recordAtStart) {
        const keys = startKeys(this.deps.redisPrefix, link.recipient.id, link.campaign.id, conversationId);
        this.deps.redis
          .eval(RELEASE_UNANSWERED_SCRIPT, keys.length, ...keys, conversationId)
          .catch(() => undefined);
      }
      throw err;
    }
    const record: ConversationRecord = {
      id: conversationId,
      recipientId: link.recipient.id,
      campaignId: link.campaign.id,
      projectId: link.campaign.projectId,
      startedAt,
      startKey,
    };
    try {
      await this.commits.add(record);
    } catch (err) {
      // The start never became durable: take it back from the cache, refuse it as retryable.
      const keys = startKeys(this.deps.redisPrefix, record.recipientId, record.campaignId, conversationId);
      const epochs = [conversationId, counted.recipientEpoch, counted.campaignEpoch];
      await releaseScript.run(this.deps.redis, keys, epochs).catch(() => undefined);
      throw new AppError('unavailable', undefined, { cause: err });
    } finally {
      counted.settled();
    }
    return { conversationId, startedAt };
  }

  /**
   * Admits one conversation at most once per client key (see startOnce): a repeat of a start
   * already made answers its conversation and consumes nothing.
   */
  admitOnce(link: OpenLink, key: string): Promise<{ conversationId: string; repeated: boolean }> {
    const { redis, redisPrefix, clock } = this.deps;
    const [recipientKey] = startKeys(redisPrefix, link.recipient.id, link.campaign.id, '');
    const now = () => clock().getTime();
    const findStart = async () => {
      const since = new Date(now() - DONE_TTL_SECONDS * 1000);
      const made = await findKeyedStart(this.deps.pool, link.recipient.id, key, since);
      return made && { conversationId: made.id, startedAtMs: made.startedAt.getTime() };
    };
    return startOnce(
      {
        redis,
        now,
        pendingSeconds: this.pendingSeconds,
        restore: (lostAt) => this.restoreRecipient(link, lostAt),
        findStart,
      },
      {
        startKey: startKeyOf(redisPrefix, link.recipient.id, key),
        recipientKey,
        markerKey: lostMarkerKey(redisPrefix),
      },
      async () => (await this.admit(link, key)).conversationId,
    );
  }

  /** Rebuilds a recipient's missing counters (and its start keys) from the durable record; `lostAt` as in seed(). */
  private async restoreRecipient(link: OpenLink, lostAt: number): Promise<void> {
    const now = this.deps.clock().getTime();
    const keys = startKeys(this.deps.redisPrefix, link.recipient.id, link.campaign.id, '');
    await this.seed(link, keys, now, counterLimits(link).windowMs, lostAt, {
      recipient: true,
      campaign: false,
    });
  }

  /** Republishes, now and then every `intervalMs`, the events JetStream has not confirmed. */
  startSweeper(intervalMs: number): void {
    this.usage.startSweeper(intervalMs);
  }

  /** Writes what waits, publishes it and stops the sweeper. */
  async close(): Promise<void> {
    await this.commits.close();
    await this.usage.close();
  }

  /** Marks a recipient's counters for a rebuild (its limits changed, so its window may have). */
  async forgetRecipient(recipientId: string): Promise<void> {
    await this.deps.redis.hdel(`${this.deps.redisPrefix}link:rcp:${recipientId}`, 'seeded');
  }

  /**
   * Checks (and with `consume`, consumes) every counter of one start; throws the refusal. A
   * consumed start is registered as unwritten until its caller calls `settled`.
   */
  private async run(
    link: OpenLink,
    conversationId: string,
    consume: boolean,
    at?: Date,
  ): Promise<Counted | undefined> {
    const { recipient, campaign } = link;
    const now = (at ?? this.deps.clock()).getTime();
    const { windowMs, perWindow, maxTotal, budget } = counterLimits(link);
    // No lifetime cap, window or budget applies, so no counter could refuse: nothing to ask.
    if (!consume && !countersApply(link)) return undefined;
    const keys = startKeys(this.deps.redisPrefix, recipient.id, campaign.id, conversationId);
    // The conversation's record, written by the same script that admits it (or, when left to its
    // first message, read from PostgreSQL then: ConversationStore.get).
    const record = consume && at !== undefined && this.deps.recordAtStart;
    const args = [
      now,
      windowMs,
      perWindow,
      maxTotal,
      budget,
      conversationId,
      consume ? 1 : 0,
      COUNTER_TTL_SECONDS,
      this.deps.conversationTtlSeconds,
      record ? recipient.id : '',
      record ? campaign.id : '',
      record ? at.toISOString() : '',
    ];
    for (let attempt = 0; attempt < 3; attempt++) {
      const reply = await this.judge({ keys, args });
      if (reply[0] === 1) {
        if (!consume) return undefined;
        // Registered in the same step that learns of the admission, before any later reply
        // (such as one that finds the counters flushed) can start a rebuild.
        let settled = () => {};
        const written = new Promise<void>((resolve) => {
          settled = resolve;
        });
        this.unwritten.add(written);
        void written.then(() => this.unwritten.delete(written));
        return { recipientEpoch: String(reply[3]), campaignEpoch: String(reply[4]), settled };
      }
      switch (reply[1]) {
        case 'missing':
          await this.seed(link, keys, now, windowMs, Number(reply[2]), {
            recipient: Number(reply[3]) === 1,
            campaign: Number(reply[4]) === 1,
          });
          continue;
        case 'link_disabled':
          throw linkDisabled(recipient);
        case 'cooldown':
          throw cooldown(recipient, Number(reply[2]));
        case 'budget_exhausted':
          throw budgetExhausted();
        default:
          throw new Error(`unexpected admission reply ${String(reply[1])}`);
      }
    }
    throw countersUnavailable();
  }

  /** Judges starts that arrived together in one atomic script run; a reply per start, in order. */
  private async runAdmissions(calls: AdmissionCall[]): Promise<AdmissionReply[]> {
    const { keys, args } = packAdmissions(lostMarkerKey(this.deps.redisPrefix), calls);
    return (await admitScript.run(this.deps.redis, keys, args)) as AdmissionReply[];
  }

  /**
   * Rebuilds missing counters from PostgreSQL (the durable record) before admitting. An admission
   * counted in Redis just before it lost its data may not be written yet, and the rebuild must not
   * miss it: so it first waits for this instance's admissions still being written, and, within
   * `rebuildGraceMs` of the moment the loss was first noticed (`lostAt`), until that grace has
   * passed, by when other replicas' writes of such admissions have landed too. Only the counters
   * found missing are counted: after a loss, every recipient's first start rebuilds its own
   * counters, and the campaign's record, which may hold millions of conversations, is counted
   * once per campaign, not once per recipient (see countCampaign); a burst of starts at one
   * link reads its recipient's record once (see sharedFacts).
   */
  private async seed(
    link: OpenLink,
    keys: readonly string[],
    now: number,
    windowMs: number,
    lostAt: number,
    missing: { recipient: boolean; campaign: boolean },
  ): Promise<void> {
    const deadline = lostAt + this.deps.rebuildGraceMs;
    if (deadline > this.deps.clock().getTime()) await this.graceEnd(deadline);
    if (this.unwritten.size > 0) {
      const waited = await within(Promise.all(this.unwritten), REBUILD_WAIT_MS);
      if (waited === TIMED_OUT)
        this.deps.logger.warn({ recipientId: link.recipient.id }, 'rebuilding counters with writes pending');
    }
    const [recipient, campaignCount] = await Promise.all([
      missing.recipient ? this.recipientFacts(link.recipient.id, windowMs, now) : undefined,
      missing.campaign ? this.countCampaign(link.campaign.id) : -1,
    ]);
    // The recipient service's count also survives a flush; never seed below it.
    const recipientCount = recipient ? Math.max(recipient.count, link.recipient.interactionCount ?? 0) : -1;
    const starts = recipient ? recipient.windowStarts.flatMap((s) => [s.startedAtMs, s.id]) : [];
    // The keys of starts a customer may still retry, each for what is left of its time.
    const keyed = (recipient?.keyedStarts ?? [])
      .map((s) => ({ ...s, ttl: Math.ceil((s.startedAtMs + DONE_TTL_SECONDS * 1000 - now) / 1000) }))
      .filter((s) => s.ttl > 0);
    // Every new recipient's first start finds no counters either: with nothing in the record to
    // restore, that is routine (a campaign's launch has one per customer), not worth an info line.
    const restored = recipientCount > 0 || campaignCount > 0;
    this.deps.onSeeded?.(restored ? 'restored' : 'empty');
    this.deps.logger[restored ? 'info' : 'debug'](
      {
        recipientId: link.recipient.id,
        campaignId: link.campaign.id,
        rebuilt: missing,
        recipientCount,
        campaignCount,
      },
      restored ? 'usage counters rebuilt' : 'usage counters started empty',
    );
    await seedScript.run(
      this.deps.redis,
      [...keys.slice(0, 3), ...keyed.map((s) => startKeyOf(this.deps.redisPrefix, link.recipient.id, s.key))],
      [
        recipientCount,
        campaignCount,
        COUNTER_TTL_SECONDS,
        windowMs,
        randomBase62(16),
        starts.length / 2,
        ...starts,
        ...keyed.flatMap((s) => [s.id, s.ttl]),
      ],
    );
  }

  /**
   * A recipient's count, its starts since `now - windowMs` and its keyed starts a customer may
   * still retry (see sharedFacts: a read begun earlier holds the keys a later one needs too).
   */
  private recipientFacts(recipientId: string, windowMs: number, now: number): Promise<RecipientFacts> {
    const since = now - windowMs;
    return this.sharedFacts(`${recipientId} ${windowMs}`, since, () =>
      this.factsOf({
        recipientId,
        since: windowMs > 0 ? new Date(since) : null,
        keysSince: new Date(now - DONE_TTL_SECONDS * 1000),
      }),
    );
  }

  /** Writes admitted conversations with the batch announcing them, then has it announced. */
  private async write(rows: ConversationRecord[]): Promise<void> {
    const id = newId('usb');
    const batch: UsageStartsBatch = { batchId: id, recipients: startsByRecipient(rows) };
    const outbox: UsageBatch = { id, event: JSON.stringify(batch), createdAt: this.deps.clock() };
    try {
      await insertConversations(this.deps.pool, rows, outbox);
    } catch (err) {
      // A statement whose answer was lost (the connection cut after it; a primary shut down in a
      // failover, which may say so after committing; the client's read timeout, the statement
      // perhaps still running) may have committed, or may yet: refused, its starts would be
      // taken back from the counters and refused to the customers, while their conversations
      // are recorded and billed. Only PostgreSQL's own refusal says nothing was written; else
      // the fence settles it. When the fence cannot be made either, the write counts as failed.
      if (isPostgresRefusal(err)) throw err;
      if (!(await fenceUsageBatch(this.deps.pool, id, this.deps.clock()).catch(() => false))) throw err;
      this.deps.logger.warn({ err, batchId: id }, 'a write whose answer was lost had committed');
    }
    this.deps.onWritten?.(rows);
    this.usage.announce({ id, batch });
  }
}

/** The conversations of a written batch by recipient, each recipient's in the order they were admitted. */
function startsByRecipient(rows: readonly ConversationRecord[]): RecipientStarts[] {
  const byRecipient = new Map<string, RecipientStarts>();
  for (const row of rows) {
    let entry = byRecipient.get(row.recipientId);
    if (!entry) {
      const { recipientId, campaignId, projectId } = row;
      entry = { recipientId, campaignId, projectId, startedAtMs: [] };
      byRecipient.set(recipientId, entry);
    }
    entry.startedAtMs.push(row.startedAt.getTime());
  }
  return [...byRecipient.values()];
}
