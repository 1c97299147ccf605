import { LIMITS } from '@outreach/contracts';
import { readJsonBody } from '@outreach/platform';
import type { Context, Middleware } from 'koa';

/**
 * The parsed JSON body, read at most once per request (idempotency needs it for its
 * fingerprint before the handler does). 413/415/400 come from `readJsonBody`.
 */
export async function requestBody(ctx: Context): Promise<unknown> {
  if (ctx.state.bodyRead) return ctx.state.body;
  ctx.state.body = await readJsonBody(ctx, { limitBytes: LIMITS.bodyBytes });
  ctx.state.bodyRead = true;
  return ctx.state.body;
}

/** Reads the JSON body into `ctx.state.body`. */
export const jsonBody: Middleware = async (ctx, next) => {
  await requestBody(ctx);
  await next();
};
