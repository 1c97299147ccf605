import type { Scope } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { Middleware } from 'koa';
import type { Grant } from '../grant-cache';

/** Refuses a key that lacks `scope` with 403 naming the scope needed. */
export function requireScope(scope: Scope): Middleware {
  return async (ctx, next) => {
    const grant = ctx.state.grant as Grant;
    if (!grant.scopes.includes(scope)) {
      throw new AppError('forbidden', `This API key lacks the scope ${scope}.`, {
        details: { reason: 'missing_scope', requiredScope: scope },
      });
    }
    await next();
  };
}
