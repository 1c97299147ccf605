import { AppError, type Clock } from '@outreach/platform';
import type Redis from 'ioredis';
import { countInMinute, minuteKey, secondsToNextMinute } from '../state/minute-counts';

/**
 * Lookups of things that exist nowhere (made-up link tokens, made-up conversation ids), counted
 * per subject and clock minute in Redis, so every replica shares a subject's count. Each such
 * lookup reaches a database, so past `perMinute` misses a subject is refused before the next
 * lookup, until the minute ends. Lookups that find something never count. The check and the count
 * are separate steps, so a burst of lookups already under way may pass the limit by a few: the
 * point is to bound the lookups, not to count them exactly. A Redis failure lets lookups go ahead,
 * since refusing customers would cost more than a lookup.
 */
export class MissLimit {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly perMinute: number,
    private readonly clock: Clock,
    private readonly refusal: (limitPerMinute: number, retryAfterSeconds: number) => AppError,
  ) {}

  /** Throws the refusal (429, with `Retry-After`) when `subject` has used up this minute's misses. */
  async check(subject: string): Promise<void> {
    const now = this.clock().getTime();
    let missed: string | null;
    try {
      missed = await this.redis.get(minuteKey(this.keyPrefix + subject, now));
    } catch {
      return;
    }
    if (Number(missed ?? 0) < this.perMinute) return;
    throw this.refusal(this.perMinute, secondsToNextMinute(now));
  }

  /** Counts one lookup by `subject` that found nothing. */
  async record(subject: string): Promise<void> {
    const key = minuteKey(this.keyPrefix + subject, this.clock().getTime());
    await countInMinute(this.redis, key).catch(() => undefined);
  }
}

/** 429 `rate_limited` of a miss limit, with its reason and `Retry-After`. */
function tooManyMisses(reason: string, message: string, hint: string) {
  return (limitPerMinute: number, retryAfterSeconds: number) =>
    new AppError('rate_limited', message, {
      hint,
      details: { reason, limitPerMinute, retryAfterSeconds },
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
}

/**
 * Made-up link tokens by client address: each token no cache knows costs a ResolveLink call and a
 * lookup in the recipient service. Customers behind one shared address opening their own links
 * are never refused by it, since tokens that exist never count.
 */
export function unknownLinksLimit(redis: Redis, prefix: string, perMinute: number, clock: Clock): MissLimit {
  return new MissLimit(
    redis,
    `${prefix}link:unknown:`,
    perMinute,
    clock,
    tooManyMisses(
      'unknown_links',
      'Too many links that do not exist were opened from this address.',
      'Check the link, then try again in a minute.',
    ),
  );
}

/**
 * Made-up conversation ids by link: each one costs a Redis read and a primary-key lookup in
 * PostgreSQL (a conversation whose Redis record is gone is looked for there).
 */
export function unknownConversationsLimit(
  redis: Redis,
  prefix: string,
  perMinute: number,
  clock: Clock,
): MissLimit {
  return new MissLimit(
    redis,
    `${prefix}link:unknown-conversations:`,
    perMinute,
    clock,
    tooManyMisses(
      'unknown_conversations',
      'Too many conversations that do not exist were asked for on this link.',
      'Reload the link to start a new conversation.',
    ),
  );
}
