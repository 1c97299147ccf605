import type { Middleware } from 'koa';
import type { Counter } from 'prom-client';
import type { Grant } from '../grant-cache';
import { type RateLimiter, type RateLimitState, rateLimited, rateLimitHeaders } from '../rate-limiter';

/** Requests per minute of a key that has no limit of its own. */
export const DEFAULT_KEY_LIMIT = 600;

/** Failed authentications a client address may make per minute, unless configured otherwise. */
export const DEFAULT_FAILED_AUTH_PER_MINUTE = 30;

/** Requests for the API document a client address may make per minute, unless configured otherwise. */
export const DEFAULT_PUBLIC_PER_MINUTE = 600;

/** The per-minute limit of a grant's key. */
export function keyLimitOf(grant: Grant): number {
  return grant.rateLimitPerMinute > 0 ? grant.rateLimitPerMinute : DEFAULT_KEY_LIMIT;
}

/**
 * Counts the request against its key's per-minute budget and sets the rate-limit headers; 429
 * past it. When `authenticate` already counted it (`ctx.state.keyRateLimit`), uses those figures.
 */
export function rateLimitPerKey(limiter: RateLimiter, refusals: Counter<'reason'>): Middleware {
  return async (ctx, next) => {
    const grant = ctx.state.grant as Grant;
    const counted = ctx.state.keyRateLimit as RateLimitState | undefined;
    const state = counted ?? (await limiter.hit('per-key', `key:${grant.keyId}`, keyLimitOf(grant), true));
    ctx.set(rateLimitHeaders(state));
    if (!state.allowed) {
      refusals.inc({ reason: 'key' });
      throw rateLimited(state);
    }
    await next();
  };
}

/** Per-address budget for the unauthenticated API document, so it too carries the headers. */
export function rateLimitPerAddress(
  limiter: RateLimiter,
  perMinute: number,
  refusals: Counter<'reason'>,
): Middleware {
  return async (ctx, next) => {
    const state = await limiter.hit('per-address', `addr:${ctx.ip}`, perMinute, true);
    ctx.set(rateLimitHeaders(state));
    if (!state.allowed) {
      refusals.inc({ reason: 'address' });
      throw rateLimited(state);
    }
    await next();
  };
}
