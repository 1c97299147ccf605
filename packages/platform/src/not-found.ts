import type { Middleware } from 'koa';
import { AppError } from './errors';

interface Layer {
  methods: string[];
}

/** The refusal of a method that a path does not support, naming the methods it does. */
export function methodNotAllowed(method: string, allowed: readonly string[]): AppError {
  return new AppError('method_not_allowed', undefined, {
    details: { method, allowed: [...allowed] },
    headers: { Allow: allowed.join(', ') },
  });
}

/**
 * Runs after the router when no route answered: 405 with `Allow` when the path exists
 * for other methods, else 404.
 */
export const routeNotFound: Middleware = async (ctx) => {
  const layers = ((ctx as unknown as { matched?: Layer[] }).matched ?? []).filter((l) => l.methods.length);
  if (layers.length > 0) throw methodNotAllowed(ctx.method, [...new Set(layers.flatMap((l) => l.methods))]);
  throw new AppError('not_found', 'No such endpoint.', { details: { reason: 'unknown_route' } });
};
