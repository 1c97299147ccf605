import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@outreach/platform';
import type { Middleware } from 'koa';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Requires `Authorization: Bearer <ADMIN_TOKEN>`. Both sides are hashed first so the
 * constant-time comparison also hides the token's length.
 */
export function adminAuth(token: string): Middleware {
  const expected = digest(token);
  return async (ctx, next) => {
    const m = /^Bearer ([^\s]+)$/.exec(ctx.get('authorization'));
    if (!m || !timingSafeEqual(digest(m[1]), expected)) {
      throw new AppError('unauthorized', 'A valid admin token is required.', {
        hint: 'Send "Authorization: Bearer <ADMIN_TOKEN>".',
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    await next();
  };
}
