import { describeProblem, validator } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { Middleware } from 'koa';

/**
 * Validates `data` against a contracts schema; 400 `invalid_request` naming the first
 * offending field and rule, with every problem in `details.problems`.
 */
export function check(schema: string, data: unknown, where = 'body'): void {
  const problems = validator(schema)(data);
  if (problems.length === 0) return;
  const first = problems[0];
  throw new AppError('invalid_request', `Invalid ${where}: ${describeProblem(first, 'it')}.`, {
    details: { pointer: first.pointer, rule: first.rule, problems },
  });
}

/** Refuses a query string on an endpoint that takes none (400 naming the first parameter). */
export const noQuery: Middleware = async (ctx, next) => {
  check('no-query', { ...ctx.query }, 'query');
  await next();
};
