import type Redis from 'ioredis';

// Counts per clock minute in Redis, one key per minute: the per-conversation message limit and
// the limits on lookups of what exists nowhere.

/** The key of `base`'s count in the clock minute of `nowMs`. */
export function minuteKey(base: string, nowMs: number): string {
  return `${base}:${Math.floor(nowMs / 60_000)}`;
}

/** Seconds from `nowMs` until the next clock minute begins, at least 1 (a `Retry-After`). */
export function secondsToNextMinute(nowMs: number): number {
  return Math.max(1, Math.ceil((60_000 - (nowMs % 60_000)) / 1000));
}

/** Adds one to a minute's count, kept for two minutes; returns the new count. */
export async function countInMinute(redis: Redis, key: string): Promise<number> {
  const [[, count]] = (await redis.multi().incr(key).expire(key, 120).exec()) as [[null, number]];
  return count;
}
