import type { Server } from 'node:http';
import Router from '@koa/router';
import { createLogger, requestContext } from '@outreach/platform';
import Koa, { type Middleware } from 'koa';

/** A tiny Koa app (requestContext + the given middleware) on a free port, for middleware unit tests. */
export async function serveMiddleware(
  chain: Middleware[],
  options: { route?: string; method?: 'get' | 'post' | 'patch'; proxy?: boolean } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa({ proxy: options.proxy ?? false });
  app.use(requestContext(createLogger('unit', 'silent')));
  const router = new Router();
  const final: Middleware = (ctx) => {
    ctx.body = { ok: true, state: { grant: ctx.state.grant ?? null, body: ctx.state.body ?? null } };
  };
  router[options.method ?? 'get'](options.route ?? '/p/:projectId', ...chain, final);
  app.use(router.routes());
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Middleware that puts a grant on the context, as authenticate would. */
export const withGrant =
  (grant: Partial<import('../../src/grant-cache').Grant>): Middleware =>
  async (ctx, next) => {
    ctx.state.grant = {
      keyId: 'key_1',
      projectId: 'prj_a',
      scopes: [],
      rateLimitPerMinute: 600,
      expiresAt: null,
      ...grant,
    };
    await next();
  };
