import type { CampaignSnapshot } from '@outreach/contracts';
import { type Clock, isIdOf } from '@outreach/platform';
import type Redis from 'ioredis';
import { LuaScript } from '../admission/admission.lua';
import type { ConversationRecord } from '../admission/conversations.repository';
import { GroupCommit } from '../admission/group-commit';
import type { ChatMessage } from '../assistant/assistant.client';
import { countInMinute, minuteKey, secondsToNextMinute } from '../state/minute-counts';

// Keys per DEL when conversations are erased: one command never holds Redis long.
const ERASE_CHUNK = 500;
// Deleted recipients whose conversations one query looks up.
const ERASE_BATCH = 500;
// How long a deleted recipient is remembered for its starts still being written when it was
// erased: longer than any durable write of a start can take (statement timeouts are at most 60 s).
const LATE_STARTS_MS = 5 * 60_000;

// Appends an exchange only while the conversation's record is there: a reply that ends after its
// recipient was deleted (its conversations erased, their records left as a mark) must not write
// their history back.
// KEYS: the conversation hash, its history; ARGV: messages kept, ttl seconds, then the messages.
const appendScript = new LuaScript(`
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return 0 end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`);

/**
 * Whether a campaign may have had conversations by `now`: launched, and its start reached.
 * Recipients of any other campaign (a draft's, deleted by the thousand) have nothing to erase.
 */
export function mayHaveHadConversations(campaign: CampaignSnapshot, now: Date): boolean {
  return campaign.launchedAt !== null && Date.parse(campaign.startDate) <= now.getTime();
}

/** What a conversation remembers about where it started. */
export interface ConversationInfo {
  id: string;
  recipientId: string;
  campaignId: string;
  startedAt: string;
}

/** The Redis hash of one conversation (the admission script writes it). */
export function conversationKey(prefix: string, id: string): string {
  return `${prefix}link:conv:${id}`;
}

/**
 * Conversations and their history in Redis, expiring after `ttlSeconds` without a message.
 * Keys: `<prefix>link:conv:<id>` (hash) and `<prefix>link:conv:<id>:history` (list of JSON
 * messages), `<prefix>link:conv:<id>:rate:<minute>` (message counter).
 */
export class ConversationStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    /** The durable record of conversations, and the clock its start times are judged by. */
    private readonly durable: {
      find: (id: string) => Promise<ConversationRecord | null>;
      /** The ids of the conversations of any of these recipients. */
      idsOf: (recipientIds: string[]) => Promise<string[]>;
      clock: Clock;
    },
  ) {}

  private key(id: string): string {
    return conversationKey(this.prefix, id);
  }

  /**
   * The conversation, or null when unknown or expired. When Redis no longer holds its record
   * (Redis lost its data), it comes from the durable record and is kept again, if the
   * conversation started less than the TTL ago: its customer goes on instead of starting (and
   * being counted for) a new one. One that started longer ago has been idle longer than the TTL,
   * or its record would still be in Redis. `beforeDurable` runs (and may throw) before the
   * durable record is asked. An id not of the form the runtime gives its conversations
   * (`cnv_` and 20 base62 characters) is unknown as any other, `beforeDurable` included, and is
   * never made into a key: `<id>:history` would name another conversation's history list.
   */
  async get(id: string, beforeDurable?: () => Promise<void>): Promise<ConversationInfo | null> {
    if (!isIdOf('cnv', id)) {
      await beforeDurable?.();
      return null;
    }
    const h = await this.redis.hgetall(this.key(id));
    // Erased with its recipient: never rebuilt from the durable record, which still holds it.
    if (h.erased) return null;
    if (h.id)
      return { id: h.id, recipientId: h.recipientId, campaignId: h.campaignId, startedAt: h.startedAt };
    await beforeDurable?.();
    const recorded = await this.durable.find(id);
    if (!recorded) return null;
    if (this.durable.clock().getTime() - recorded.startedAt.getTime() >= this.ttlSeconds * 1000) return null;
    const info: ConversationInfo = {
      id: recorded.id,
      recipientId: recorded.recipientId,
      campaignId: recorded.campaignId,
      startedAt: recorded.startedAt.toISOString(),
    };
    await this.redis.multi().hset(this.key(id), info).expire(this.key(id), this.ttlSeconds).exec();
    return info;
  }

  /** The last `max` messages of the conversation, oldest first. */
  async history(id: string, max: number): Promise<ChatMessage[]> {
    const raw = await this.redis.lrange(`${this.key(id)}:history`, -max, -1);
    return raw.map((r) => JSON.parse(r) as ChatMessage);
  }

  /**
   * Appends one exchange, keeping at most `max` messages, and extends the conversation's life;
   * nothing once the conversation was erased (its recipient deleted).
   */
  async append(id: string, messages: ChatMessage[], max: number): Promise<void> {
    await appendScript.run(
      this.redis,
      [this.key(id), `${this.key(id)}:history`],
      [max, this.ttlSeconds, ...messages.map((m) => JSON.stringify(m))],
    );
  }

  // One lookup at a time, up to ERASE_BATCH recipients each, those arriving meanwhile in the next.
  private readonly eraser = new GroupCommit((recipientIds: string[]) => this.erase(recipientIds), 0, {
    maxBatch: ERASE_BATCH,
  });

  /** Recipients erased in the last LATE_STARTS_MS, each until when, in that order. */
  private readonly erasedRecipients = new Map<string, number>();

  /**
   * Erases what Redis holds of a deleted recipient's conversations: their records and their
   * history (the customer's messages and the replies), rather than leaving them to expire.
   * One eraser per process looks them up, many recipients a query, so that a bulk delete's
   * thousands of events never crowd the starts out of the database pool.
   */
  eraseRecipient(recipientId: string): Promise<void> {
    // Remembered before the lookup, so that a start of this process written after the lookup
    // began is erased when written (see eraseWrittenLate), and one written before is found.
    const now = this.durable.clock().getTime();
    for (const [id, until] of this.erasedRecipients) {
      if (until > now) break;
      this.erasedRecipients.delete(id);
    }
    this.erasedRecipients.delete(recipientId);
    this.erasedRecipients.set(recipientId, now + LATE_STARTS_MS);
    return this.eraser.add(recipientId);
  }

  /**
   * Erases the conversations of a batch of starts just written whose recipient was erased while
   * they were being written: the lookup of its conversations may have run before they were.
   */
  async eraseWrittenLate(rows: readonly ConversationRecord[]): Promise<void> {
    if (this.erasedRecipients.size === 0) return;
    const now = this.durable.clock().getTime();
    const late = rows.filter((r) => (this.erasedRecipients.get(r.recipientId) ?? 0) > now);
    await this.eraseConversations(late.map((r) => r.id));
  }

  private async erase(recipientIds: string[]): Promise<void> {
    await this.eraseConversations(await this.durable.idsOf(recipientIds));
  }

  private async eraseConversations(ids: readonly string[]): Promise<void> {
    // Each record is left as a mark for the conversation's lifetime, so that a message already
    // past the link's checks does not rebuild it from the durable record and keep its text.
    for (let i = 0; i < ids.length; i += ERASE_CHUNK) {
      const erase = this.redis.multi();
      for (const id of ids.slice(i, i + ERASE_CHUNK))
        erase
          .del(this.key(id), `${this.key(id)}:history`)
          .hset(this.key(id), 'erased', '1')
          .expire(this.key(id), this.ttlSeconds);
      await erase.exec();
    }
  }

  /**
   * Counts one message against the per-minute budget of the conversation; returns the seconds
   * to wait when the budget is spent, else 0.
   */
  async takeMessageSlot(id: string, perMinute: number, nowMs: number): Promise<number> {
    const count = await countInMinute(this.redis, minuteKey(`${this.key(id)}:rate`, nowMs));
    return count <= perMinute ? 0 : secondsToNextMinute(nowMs);
  }
}
