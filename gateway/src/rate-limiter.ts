import { AppError, batchPerTurn } from '@outreach/platform';
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

/**
 * ARGV[4] hits on KEYS[2], but only while the gate bucket KEYS[1] (a failure count, only read
 * here) is below ARGV[1]: as many as the limit ARGV[2] still allows are counted. Returns the
 * bucket's count after them, its TTL, how many were counted, and 1 in fourth place when the gate
 * was shut and nothing counted (the first two values then are the gate's). One round trip
 * instead of a peek followed by a hit, and one for all the hits a gateway coalesced.
 */
const GATED_SCRIPT = `
local failed = tonumber(redis.call('GET', KEYS[1]) or '0')
if failed >= tonumber(ARGV[1]) then
  local gttl = redis.call('PTTL', KEYS[1])
  if gttl < 0 then gttl = tonumber(ARGV[3]) end
  return {failed, gttl, 0, 1}
end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
local ttl = redis.call('PTTL', KEYS[2])
if ttl < 0 then ttl = tonumber(ARGV[3]) end
local take = math.min(tonumber(ARGV[4]), tonumber(ARGV[2]) - used)
if take > 0 then
  used = redis.call('INCRBY', KEYS[2], take)
  if used == take then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
    ttl = tonumber(ARGV[3])
  end
  return {used, ttl, take, 0}
end
return {used, ttl, 0, 0}
`;

export const WINDOW_SECONDS = 60;

/**
 * The Redis command of the coalesced gated hit. The limiter gathers its calls itself until the
 * event loop's I/O is handled; a client should send it at once (`autoPipeliningIgnoredCommands`),
 * since auto-pipelining would hold it for one more turn of the loop.
 */
export const GATED_HIT_COMMAND = 'outreachGatedRateLimit';

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

/** A bucket that, once at its limit, shuts off counting in another (see `hitUnlessGated`). */
export interface Gate {
  policy: string;
  bucket: string;
  limit: number;
}

type WithScript = Redis & {
  outreachRateLimit(key: string, limit: number, windowMs: number, consume: string): Promise<number[]>;
  outreachGatedRateLimit(
    gateKey: string,
    key: string,
    gateLimit: number,
    limit: number,
    windowMs: number,
    hits: number,
  ): Promise<number[]>;
};

/** The outcome of `hitUnlessGated`. */
export interface GatedHit {
  gated: boolean;
  state: RateLimitState;
}

/** One call of `hitUnlessGated`; calls with the same key share a script run. */
interface GatedCall {
  key: string;
  gate: Gate;
  policy: string;
  bucket: string;
  limit: number;
}

/** Per-bucket request counting in Redis (keys under the configured prefix). */
export class RateLimiter {
  private readonly redis: WithScript;
  private readonly gatedHit = batchPerTurn((calls: GatedCall[]) => this.runGated(calls), {
    keyOf: (call) => call.key,
  });

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    if (!('outreachRateLimit' in redis))
      redis.defineCommand('outreachRateLimit', { numberOfKeys: 1, lua: SCRIPT });
    if (!(GATED_HIT_COMMAND in redis))
      redis.defineCommand(GATED_HIT_COMMAND, { numberOfKeys: 2, lua: GATED_SCRIPT });
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
    return this.state(policy, limit, res);
  }

  /**
   * Peeks `gate` and, only while it is below its limit, counts one request in `bucket`: the
   * same outcome as `hit(gate…, false)` followed by `hit(bucket…)`, in one round trip.
   * `gated` means the gate is at its limit; `state` is then the gate's figures (nothing counted).
   * Calls for the same gate and bucket made while the event loop handles one batch of I/O share
   * one script run: each gets the figures it would have had in a run of its own, in call order.
   */
  hitUnlessGated(gate: Gate, policy: string, bucket: string, limit: number): Promise<GatedHit> {
    const key = `${gate.policy}\n${gate.bucket}\n${gate.limit}\n${policy}\n${bucket}\n${limit}`;
    return this.gatedHit({ key, gate, policy, bucket, limit });
  }

  private async runGated(calls: GatedCall[]): Promise<GatedHit[]> {
    const { gate, policy, bucket, limit } = calls[0];
    let res: number[];
    try {
      res = await this.redis.outreachGatedRateLimit(
        `${this.prefix}rl:${gate.bucket}`,
        `${this.prefix}rl:${bucket}`,
        gate.limit,
        limit,
        WINDOW_SECONDS * 1000,
        calls.length,
      );
    } catch (err) {
      throw new AppError('unavailable', undefined, { cause: err });
    }
    if (Number(res[3]) === 1) {
      return calls.map(() => ({ gated: true, state: this.state(gate.policy, gate.limit, res) }));
    }
    // The counted hits are the first ones, in call order; the rest saw the bucket full.
    const after = Number(res[0]);
    const taken = Number(res[2]);
    return calls.map((_, i) => {
      const used = i < taken ? after - taken + i + 1 : after;
      return { gated: false, state: this.state(policy, limit, [used, res[1], i < taken ? 1 : 0]) };
    });
  }

  private state(policy: string, limit: number, res: number[]): RateLimitState {
    const used = Number(res[0]);
    const ttlMs = Number(res[1]);
    const resetInSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
    return {
      policy,
      limit,
      used,
      remaining: Math.max(0, limit - used),
      resetInSeconds,
      resetAt: Math.ceil((this.now() + ttlMs) / 1000),
      allowed: Number(res[2]) === 1 && used <= limit,
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
