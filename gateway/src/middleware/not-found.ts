import { AppError } from '@outreach/platform';
import type { Middleware } from 'koa';

interface Layer {
  methods: string[];
}

/**
 * Runs after the router when no route answered: 405 with `Allow` when the path exists
 * for other methods, else 404.
 */
export const routeNotFound: Middleware = async (ctx) => {
  const layers = ((ctx as unknown as { matched?: Layer[] }).matched ?? []).filter((l) => l.methods.length);
  if (layers.length > 0) {
    const allow = [...new Set(layers.flatMap((l) => l.methods))].join(', ');
    throw new AppError('method_not_allowed', undefined, {
      details: { method: ctx.method, allowed: allow.split(', ') },
      headers: { Allow: allow },
    });
  }
  throw new AppError('not_found', 'No such endpoint.', { details: { reason: 'unknown_route' } });
};
