import type { ServiceMetrics } from '@outreach/platform';
import type { Middleware } from 'koa';

const FIXED_PATHS = new Set(['/livez', '/readyz']);

/**
 * Counts every request by method, route template and final status. It sits outside
 * `requestContext` so that it sees the status error bodies were written with; unmatched
 * paths share one label so that scanners cannot blow up the series count.
 */
export function countRequests(metrics: ServiceMetrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
      const route = matched ?? (FIXED_PATHS.has(ctx.path) ? ctx.path : 'unmatched');
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe(
        { method: ctx.method, route },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    }
  };
}
