import Router from '@koa/router';
import {
  type AccessLogMode,
  AppError,
  type DependencyStates,
  healthRoutes,
  type Lifecycle,
  type Logger,
  logAppErrors,
  requestContext,
  routeNotFound,
  type ServiceMetrics,
} from '@outreach/platform';
import type Redis from 'ioredis';
import Koa from 'koa';
import { Counter, type Registry } from 'prom-client';
import type { Backends } from './clients';
import type { GrantCache } from './grant-cache';
import { authenticate } from './middleware/authenticate';
import { countRequests } from './middleware/count-requests';
import { idempotency } from './middleware/idempotency';
import {
  DEFAULT_FAILED_AUTH_PER_MINUTE,
  DEFAULT_PUBLIC_PER_MINUTE,
  keyLimitOf,
  rateLimitPerAddress,
  rateLimitPerKey,
} from './middleware/rate-limit';
import { buildOpenApi } from './openapi';
import { RateLimiter } from './rate-limiter';
import { campaignRoutes } from './routes/campaigns.routes';
import { recipientRoutes } from './routes/recipients.routes';

/** Everything the gateway app is built from. */
export interface GatewayDeps {
  logger: Logger;
  /** Which requests get an access line (ACCESS_LOG). */
  accessLog?: AccessLogMode;
  redis: Redis;
  redisPrefix: string;
  backends: Backends;
  grants: GrantCache;
  metrics: ServiceMetrics;
  lifecycle: Lifecycle;
  /** What /readyz reports on (see healthRoutes). */
  dependencies: DependencyStates;
  trustProxy: boolean;
  /** With trustProxy, how many proxies append to X-Forwarded-For (the client is that many from its end). */
  trustedHops?: number;
  /** Failed authentications allowed per client address and minute. */
  failedAuthPerMinute?: number;
  /** Requests for the API document per client address and minute. */
  publicPerMinute?: number;
}

/** Which budget a 429 exhausted (`gateway_rate_limited_total`'s `reason`). */
export const RATE_LIMIT_REASONS = ['key', 'address', 'auth_failures'] as const;

/**
 * `gateway_rate_limited_total`, every reason's series at 0 from the start: one that appeared
 * only at its first refusal would hide that refusal from `increase()` and `rate()`.
 */
export function rateLimitRefusals(registry: Registry): Counter<'reason'> {
  const refusals = new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Requests refused with 429, by which budget was exhausted',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of RATE_LIMIT_REASONS) refusals.inc({ reason }, 0);
  return refusals;
}

/** Builds the gateway's Koa app without listening. */
export function buildApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.trustProxy, maxIpsCount: deps.trustedHops ?? 1 });
  const limiter = new RateLimiter(deps.redis, deps.redisPrefix);
  const refusals = rateLimitRefusals(deps.metrics.registry);
  const openApi = Buffer.from(JSON.stringify(buildOpenApi()));

  // Paths are matched as written (as the admin API's): @koa/router would otherwise also answer
  // /Campaigns and /campaigns/, paths no client should come to depend on; and an idempotent
  // retry sent with the slash where the first had none would be refused as another request.
  const publicRouter = new Router({ sensitive: true, strict: true });
  publicRouter.get(
    '/api/v1/openapi.json',
    rateLimitPerAddress(limiter, deps.publicPerMinute ?? DEFAULT_PUBLIC_PER_MINUTE, refusals),
    (ctx) => {
      ctx.type = 'application/json';
      ctx.body = openApi;
    },
  );

  const api = new Router({ sensitive: true, strict: true });
  campaignRoutes(api, deps.backends);
  recipientRoutes(api, deps.backends, idempotency({ redis: deps.redis, prefix: deps.redisPrefix }));

  app.use(countRequests(deps.metrics, [api]));
  logAppErrors(app, deps.logger);
  app.use(requestContext(deps.logger, { accessLog: deps.accessLog }));
  app.use(healthRoutes(deps.lifecycle, deps.dependencies));
  app.use(publicRouter.routes());
  // Only /api is the public API; anything else is simply not found, without auth.
  app.use(async (ctx, next) => {
    if (ctx.path === '/api' || ctx.path.startsWith('/api/')) return next();
    throw new AppError('not_found', 'No such endpoint.', { details: { reason: 'unknown_route' } });
  });
  app.use(
    authenticate({
      cache: deps.grants,
      limiter,
      failedAuthPerMinute: deps.failedAuthPerMinute ?? DEFAULT_FAILED_AUTH_PER_MINUTE,
      refusals,
      keyLimit: keyLimitOf,
    }),
  );
  app.use(rateLimitPerKey(limiter, refusals));
  app.use(api.routes());
  app.use(routeNotFound);
  return app;
}
