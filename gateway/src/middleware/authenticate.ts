import { createHash } from 'node:crypto';
import { AppError, forwardedOf } from '@outreach/platform';
import type { Middleware } from 'koa';
import type { Counter } from 'prom-client';
import type { Grant, GrantCache } from '../grant-cache';
import { type RateLimiter, rateLimited, rateLimitHeaders } from '../rate-limiter';

/** Options of `authenticate`. */
export interface AuthenticateOptions {
  cache: GrantCache;
  limiter: RateLimiter;
  /** Failed authentications allowed per client address and minute. */
  failedAuthPerMinute: number;
  refusals: Counter<'reason'>;
  /**
   * The per-minute limit of a grant's key. When given, a request whose grant is already
   * cached is counted against its key in the same Redis round trip as the address check,
   * and the key's figures are left in `ctx.state.keyRateLimit` for `rateLimitPerKey`.
   */
  keyLimit?: (grant: Grant) => number;
}

// A key is an opaque token; anything outside this alphabet or length cannot be one.
const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]{8,512})$/i;
// Codes the key look-up answers for a key that does not grant access.
const DENIED = new Set(['unauthorized', 'not_found', 'forbidden', 'invalid_request']);

/** SHA-256 (hex) of a presented key: keys are stored and looked up only as this hash. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Resolves `Authorization: Bearer <key>` into `ctx.state.grant`. Every failure is the same
 * 401 with `WWW-Authenticate: Bearer`, and counts against the client address: an address
 * past its failed-authentication budget is refused with 429 before any look-up, so keys
 * cannot be guessed at speed and the key store is not flooded. A key found valid lately is no
 * guess, and goes on whatever the address's budget: one client's bad keys behind a shared
 * address (a NAT, an egress proxy) do not shut out the others' good ones.
 */
export function authenticate(opts: AuthenticateOptions): Middleware {
  return async (ctx, next) => {
    const bucket = `authfail:${ctx.ip}`;
    const header = ctx.get('authorization');
    const presented = header === '' ? null : BEARER.exec(header.trim());
    const cached = presented && opts.keyLimit ? opts.cache.peek(hashKey(presented[1])) : undefined;
    if (cached && opts.keyLimit) {
      // The common case: no look-up is needed, so check the address and count the key at once.
      const gate = { policy: 'auth-failures', bucket, limit: opts.failedAuthPerMinute };
      const limit = opts.keyLimit(cached);
      const { gated, state } = await opts.limiter.hitUnlessGated(
        gate,
        'per-key',
        `key:${cached.keyId}`,
        limit,
      );
      ctx.state.grant = cached;
      // Gated, the key was not counted: count it on its own (rare, an extra round trip).
      ctx.state.keyRateLimit = gated
        ? await opts.limiter.hit('per-key', `key:${cached.keyId}`, limit)
        : state;
      return next();
    }
    const seen = await opts.limiter.hit('auth-failures', bucket, opts.failedAuthPerMinute, false);
    // Until the key's own figures replace them, the address budget is what the client sees.
    ctx.set(rateLimitHeaders(seen));
    if (
      seen.used >= opts.failedAuthPerMinute &&
      !(presented && opts.cache.recentlyValid(hashKey(presented[1])))
    ) {
      opts.refusals.inc({ reason: 'auth_failures' });
      throw rateLimited(seen);
    }
    const fail = async (reason: string, message: string): Promise<never> => {
      const after = await opts.limiter.hit('auth-failures', bucket, opts.failedAuthPerMinute, true);
      ctx.set(rateLimitHeaders(after));
      const challenge =
        reason === 'missing' ? 'Bearer realm="outreach"' : 'Bearer realm="outreach", error="invalid_token"';
      throw new AppError('unauthorized', message, {
        details: { reason },
        headers: { 'WWW-Authenticate': challenge },
      });
    };
    if (header === '') return fail('missing', 'The Authorization header is missing.');
    const match = presented;
    if (match === null) {
      return fail(
        'malformed',
        'The Authorization header must be "Bearer <key>", the key 8 to 512 letters, digits or ._~+/=-.',
      );
    }
    let grant: Grant;
    try {
      grant = await opts.cache.get(hashKey(match[1]), forwardedOf(ctx));
    } catch (err) {
      if (err instanceof AppError && DENIED.has(err.code)) {
        const reason = typeof err.details.reason === 'string' ? err.details.reason : 'unknown_key';
        return fail(reason, 'The API key is not valid.');
      }
      throw err;
    }
    ctx.state.grant = grant;
    await next();
  };
}
