import {
  type AccessLogMode,
  AppError,
  type DependencyStates,
  healthRoutes,
  type Lifecycle,
  logAppErrors,
  requestContext,
  routeLabel,
  type ServiceMetrics,
} from '@outreach/platform';
import Koa from 'koa';
import { dashboardRoutes } from './dashboard/router';
import type { CampaignDeps } from './deps';
import { adminAuth } from './http/admin.auth';
import { adminRouter } from './http/admin.routes';
import type { RecipientsForwarder } from './recipients/recipients.client';

/** What the HTTP app is built from; nothing here listens. */
export interface HttpAppDeps {
  domain: CampaignDeps;
  /** Which requests get an access line (ACCESS_LOG). */
  accessLog?: AccessLogMode;
  recipients: RecipientsForwarder;
  adminToken: string;
  lifecycle: Lifecycle;
  metrics: ServiceMetrics;
  /** What /readyz reports on (see healthRoutes). */
  dependencies: DependencyStates;
  /** Dashboard cookies carry `Secure`; off only for plain-http local development (Safari drops them). */
  secureCookies: boolean;
  /** Behind the Ingress: the client address is read from X-Forwarded-For (see PROXY_CONFIG). */
  trustProxy?: boolean;
  trustedHops?: number;
}

/** Builds the Koa app: request context, metrics, health, then the authenticated admin API. */
export function buildHttpApp(deps: HttpAppDeps): Koa {
  const app = new Koa({ proxy: deps.trustProxy ?? false, maxIpsCount: deps.trustedHops ?? 1 });
  logAppErrors(app, deps.domain.logger);
  app.use(requestContext(deps.domain.logger, { accessLog: deps.accessLog }));
  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The route template, never the raw path, keeps label cardinality bounded.
      const route = routeLabel(ctx);
      const seconds = (performance.now() - started) / 1000;
      deps.metrics.http.record([ctx.method, route], String(ctx.status), seconds);
    }
  });
  app.use(healthRoutes(deps.lifecycle, deps.dependencies));
  app.use(
    dashboardRoutes({ domain: deps.domain, recipients: deps.recipients, secureCookies: deps.secureCookies }),
  );
  const router = adminRouter(deps.domain, deps.recipients);
  const auth = adminAuth(deps.adminToken);
  // Whatever the case of the path: a router matching paths case-insensitively once let
  // /ADMIN/v1/… through without the token (the routers are case-sensitive now as well).
  app.use(async (ctx, next) => (ctx.path.toLowerCase().startsWith('/admin/') ? auth(ctx, next) : next()));
  // Runs after routing: whatever no route answered (and allowedMethods did not refuse) is 404.
  app.use(async (ctx, next) => {
    await next();
    if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
      throw new AppError('method_not_allowed', undefined, {
        headers: { Allow: String(ctx.response.get('Allow')) },
      });
    }
    if (ctx.status === 404 && ctx.body === undefined) {
      throw new AppError('not_found', 'No such route.', { details: { path: ctx.path } });
    }
  });
  app.use(router.routes());
  // Sets 405/501 with Allow; the middleware above turns that into the catalogue's body.
  app.use(router.allowedMethods());
  return app;
}
