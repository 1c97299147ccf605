import { AppError, type Clock } from '@outreach/platform';
import type Redis from 'ioredis';

/**
 * Made-up link tokens by client address. Every token that no cache knows costs a ResolveLink call
 * and a database lookup in the recipient service, so an address that has tried `perMinute` tokens
 * that exist nowhere within the current clock minute is refused before the next lookup. Tokens
 * that exist never count: customers behind one shared address opening their own links are never
 * refused by it. The check and the count are separate steps, so a burst of lookups already under
 * way may pass the limit by a few; the point is to bound the lookups, not to count them exactly.
 * Counted in Redis, so every replica shares an address's count.
 */
export class UnknownLinks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {}

  /** Throws 429 `rate_limited` (with `Retry-After`) when `address` has used up this minute's tries. */
  async check(address: string): Promise<void> {
    const now = this.clock().getTime();
    let tried: string | null;
    try {
      tried = await this.redis.get(this.key(address, now));
    } catch {
      // Without Redis the lookup goes ahead: a refused customer would cost more than one lookup.
      return;
    }
    if (Number(tried ?? 0) < this.perMinute) return;
    const retryAfter = Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));
    throw new AppError('rate_limited', 'Too many links that do not exist were opened from this address.', {
      hint: 'Check the link, then try again in a minute.',
      details: { reason: 'unknown_links', limitPerMinute: this.perMinute, retryAfterSeconds: retryAfter },
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  /** Counts one token tried from `address` that no recipient has. */
  async record(address: string): Promise<void> {
    const key = this.key(address, this.clock().getTime());
    await this.redis
      .multi()
      .incr(key)
      .expire(key, 120)
      .exec()
      .catch(() => undefined);
  }

  private key(address: string, nowMs: number): string {
    return `${this.prefix}link:unknown:${address}:${Math.floor(nowMs / 60_000)}`;
  }
}
