import { AppError } from '@outreach/platform';
import type Redis from 'ioredis';

/**
 * One fixed 60-second window per bucket, started by its first request. Reading, checking
 * and incrementing happen in one Lua script so concurrent gateways can never admit more
 * than the limit; refused requests are not counted (a client that backs off recovers).
 */
const SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[2]) end
if ARGV[3] == '1' and used < tonumber(ARGV[1]) then
  used = redis.call('INCR', KEYS[1])
  if used == 1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return {used, ttl, 1}
end
return {used, ttl, 0}
`;

export const WINDOW_SECONDS = 60;

/** A bucket's figures after a hit (or a peek). */
export interface RateLimitState {
  /** Name of the policy in the RateLimit-Policy header. */
  policy: string;
  limit: number;
  used: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetInSeconds: number;
  /** Unix seconds of the reset. */
  resetAt: number;
  allowed: boolean;
}

type WithScript = Redis & {
  outreachRateLimit(key: string, limit: number, windowMs: number, consume: string): Promise<number[]>;
};

/** Per-bucket request counting in Redis (keys under the configured prefix). */
export class RateLimiter {
  private readonly redis: WithScript;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    if (!('outreachRateLimit' in redis))
      redis.defineCommand('outreachRateLimit', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  /** Counts one request in `bucket` when `consume` (and the limit allows), else only reads. */
  async hit(policy: string, bucket: string, limit: number, consume = true): Promise<RateLimitState> {
    let res: number[];
    try {
      res = await this.redis.outreachRateLimit(
        `${this.prefix}rl:${bucket}`,
        limit,
        WINDOW_SECONDS * 1000,
        consume ? '1' : '0',
      );
    } catch (err) {
      throw new AppError('unavailable', undefined, { cause: err });
    }
    const [used, ttlMs, allowed] = res.map(Number);
    const resetInSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    return {
      policy,
      limit,
      used,
      remaining: Math.max(0, limit - used),
      resetInSeconds,
      resetAt: Math.ceil((this.now() + ttlMs) / 1000),
      allowed: allowed === 1 && used <= limit,
    };
  }
}

/** The rate-limit headers every API response carries (legacy X- names and the IETF draft's). */
export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(s.limit),
    'X-RateLimit-Remaining': String(s.remaining),
    'X-RateLimit-Reset': String(s.resetAt),
    'X-RateLimit-Used': String(Math.min(s.used, s.limit)),
    'RateLimit-Policy': `"${s.policy}";q=${s.limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"${s.policy}";r=${s.remaining};t=${s.resetInSeconds}`,
  };
}

/** The 429 refusal for an exhausted bucket, with its integer Retry-After. */
export function rateLimited(s: RateLimitState): AppError {
  return new AppError('rate_limited', undefined, {
    details: { limit: s.limit, windowSeconds: WINDOW_SECONDS, retryAfterSeconds: s.resetInSeconds },
    headers: { ...rateLimitHeaders(s), 'Retry-After': String(s.resetInSeconds) },
  });
}
