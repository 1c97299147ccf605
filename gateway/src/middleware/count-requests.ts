import type Router from '@koa/router';
import { routeLabel, type ServiceMetrics } from '@outreach/platform';
import type { Middleware } from 'koa';

/**
 * Counts every request by method, route template and final status. It sits outside
 * `requestContext` so that it sees the status error bodies were written with; unmatched
 * paths share one label so that scanners cannot blow up the series count. Requests refused
 * before routing (401, 429) are labelled with the template of `routers` they were meant for,
 * so refusals show on their route.
 */
export function countRequests(metrics: ServiceMetrics, routers: Router[] = []): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeLabel(ctx, () => templateOf(routers, ctx.method, ctx.path));
      metrics.http.record([ctx.method, route], String(ctx.status), (performance.now() - started) / 1000);
    }
  };
}

/** The template of the route a router would run for this method and path, as the router picks it. */
function templateOf(routers: Router[], method: string, path: string): string | undefined {
  for (const router of routers) {
    const layers = router.match(path, method).pathAndMethod.filter((l) => l.methods.length > 0);
    const last = layers[layers.length - 1];
    if (last) return String(last.path);
  }
  return undefined;
}
